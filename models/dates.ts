/**
 * Dates an intent names, written the way a date field asks for them. An intent says "May 2023" or
 * "Apr 21, 2026"; the field shows its format in its placeholder ("M/D/YY", "YYYY-MM-DD") and takes
 * only that. A month with no day stands for a range, so it gives its first and its last day.
 */

export interface CalendarDate {
  year: number;
  /** 1-12. */
  month: number;
  day: number;
}

/** A date of the intent; `part` says whether it is a whole day or one end of a named month. */
export interface IntentDate {
  date: CalendarDate;
  part: 'day' | 'month-start' | 'month-end';
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_WORD =
  '(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\\.?';

function monthNumber(word: string): number {
  return MONTHS.indexOf(word.slice(0, 3).toLowerCase()) + 1;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function valid(date: CalendarDate): boolean {
  return date.month >= 1 && date.month <= 12 && date.day >= 1 && date.day <= daysInMonth(date.year, date.month);
}

/**
 * The dates an intent names, in the order they appear: "April 21, 2026", "21 April 2026", "2026-04-21"
 * (a day each) and "May 2023" (its first and last day). Impossible dates are left out.
 */
export function intentDates(intent: string): IntentDate[] {
  const found: { at: number; dates: IntentDate[] }[] = [];
  const taken: [number, number][] = [];
  const claim = (match: RegExpMatchArray, dates: IntentDate[]) => {
    const start = match.index!;
    const end = start + match[0].length;
    if (taken.some(([a, b]) => start < b && end > a)) return;
    taken.push([start, end]);
    const kept = dates.filter((d) => valid(d.date));
    if (kept.length > 0) found.push({ at: start, dates: kept });
  };
  const day = (year: number, month: number, d: number): IntentDate => ({ date: { year, month, day: d }, part: 'day' });
  for (const m of intent.matchAll(new RegExp(`\\b${MONTH_WORD}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'gi'))) {
    claim(m, [day(Number(m[3]), monthNumber(m[1]!), Number(m[2]))]);
  }
  for (const m of intent.matchAll(new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+${MONTH_WORD},?\\s+(\\d{4})\\b`, 'gi'))) {
    claim(m, [day(Number(m[3]), monthNumber(m[2]!), Number(m[1]))]);
  }
  for (const m of intent.matchAll(/\b(\d{4})-(\d{2})-(\d{2})\b/g)) claim(m, [day(Number(m[1]), Number(m[2]), Number(m[3]))]);
  for (const m of intent.matchAll(new RegExp(`\\b${MONTH_WORD}\\s+(\\d{4})\\b`, 'gi'))) {
    const year = Number(m[2]);
    const month = monthNumber(m[1]!);
    claim(m, [
      { date: { year, month, day: 1 }, part: 'month-start' },
      { date: { year, month, day: daysInMonth(year, month) }, part: 'month-end' },
    ]);
  }
  return found.sort((a, b) => a.at - b.at).flatMap((entry) => entry.dates);
}

/**
 * A field's date format read from its placeholder: three parts, one each of Y (2 or 4), M (1 or 2)
 * and D (1 or 2), joined by one separator ("M/D/YY", "YYYY-MM-DD", "DD.MM.YYYY"). Anything else is
 * not a date format.
 */
export function dateFormat(placeholder: string): string | undefined {
  const match = /^(Y{2}|Y{4}|M{1,2}|D{1,2})([-/.])(Y{2}|Y{4}|M{1,2}|D{1,2})\2(Y{2}|Y{4}|M{1,2}|D{1,2})$/i.exec(placeholder.trim());
  if (!match) return undefined;
  const parts = [match[1]!, match[3]!, match[4]!].map((part) => part.toUpperCase());
  const letters = parts
    .map((part) => part[0])
    .sort()
    .join('');
  return letters === 'DMY' ? parts.join(match[2]) : undefined;
}

/** A date written in a format from `dateFormat`. */
export function formatDate(date: CalendarDate, format: string): string {
  return format.replace(/Y{4}|Y{2}|M{1,2}|D{1,2}/g, (part) => {
    const value = part[0] === 'Y' ? date.year : part[0] === 'M' ? date.month : date.day;
    if (part === 'YY') return String(value % 100).padStart(2, '0');
    return String(value).padStart(part.length, '0');
  });
}
