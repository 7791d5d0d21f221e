/** Formatting and clock helpers the embedded sites share, so pages and task references agree. */

export const US_STATES = [
  'Alabama',
  'Alaska',
  'Arizona',
  'Arkansas',
  'California',
  'Colorado',
  'Connecticut',
  'Delaware',
  'District of Columbia',
  'Florida',
  'Georgia',
  'Hawaii',
  'Idaho',
  'Illinois',
  'Indiana',
  'Iowa',
  'Kansas',
  'Kentucky',
  'Louisiana',
  'Maine',
  'Maryland',
  'Massachusetts',
  'Michigan',
  'Minnesota',
  'Mississippi',
  'Missouri',
  'Montana',
  'Nebraska',
  'Nevada',
  'New Hampshire',
  'New Jersey',
  'New Mexico',
  'New York',
  'North Carolina',
  'North Dakota',
  'Ohio',
  'Oklahoma',
  'Oregon',
  'Pennsylvania',
  'Rhode Island',
  'South Carolina',
  'South Dakota',
  'Tennessee',
  'Texas',
  'Utah',
  'Vermont',
  'Virginia',
  'Washington',
  'West Virginia',
  'Wisconsin',
  'Wyoming',
];

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MONTHS_SHORT = MONTHS.map((m) => m.slice(0, 3));

export function money(value: number): string {
  return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** `1,234.56`: the form task references use (an answer "$1,234.56" contains it as a token). */
export function moneyNumber(value: number): string {
  return money(value).slice(1);
}

function parts(iso: string): { y: number; m: number; d: number } {
  const [y, m, d] = iso.slice(0, 10).split('-').map(Number);
  return { y: y ?? 1970, m: m ?? 1, d: d ?? 1 };
}

/** `5/3/23` */
export function shortDate(iso: string): string {
  const { y, m, d } = parts(iso);
  return `${m}/${d}/${String(y).slice(2)}`;
}

/** `May 3, 2023` */
export function longDate(iso: string): string {
  const { y, m, d } = parts(iso);
  return `${MONTHS[m - 1]} ${d}, ${y}`;
}

/** `May 3, 2023` with the short month: `May 3, 2023` / `Jan 3, 2030`. */
export function mediumDate(iso: string): string {
  const { y, m, d } = parts(iso);
  return `${MONTHS_SHORT[m - 1]} ${d}, ${y}`;
}

export function monthName(month: number): string {
  return MONTHS[month - 1] ?? '';
}

/** A deterministic clock for changes made during an episode: the seed's "now", one minute per tick. */
export class SiteClock {
  private ticks = 0;
  constructor(private readonly start: string) {}
  now(): string {
    this.ticks++;
    return new Date(Date.parse(this.start) + this.ticks * 60_000).toISOString();
  }
}

/** Page slice and page count of a list. */
export function paginate<T>(items: readonly T[], pageNo: number, perPage: number): { items: T[]; pages: number; page: number } {
  const pages = Math.max(1, Math.ceil(items.length / perPage));
  const page = Math.min(pageNo, pages);
  return { items: items.slice((page - 1) * perPage, page * perPage), pages, page };
}

/** A URL with some query parameters replaced (null removes one), in a stable order. */
export function withQuery(path: string, query: URLSearchParams, changes: Record<string, string | null>): string {
  const next = new URLSearchParams(query);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) next.delete(key);
    else next.set(key, value);
  }
  const qs = next.toString();
  return qs ? `${path}?${qs}` : path;
}
