/**
 * What a Type action's text means for a field that is not typed into character by character (a date,
 * time, month, week, colour or range input, edited through a picker, segments or a handle), and whether a
 * field holds what was typed. A model writes a date as people read it ("03/15/2016", "March 15, 2016");
 * the input's value has its own syntax ("2016-03-15"), which is what the executor sets.
 */
import type { FieldState } from './pageRuntime';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

function validDate(year: number, month: number, day: number): string | undefined {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
}

/** The number of a month named in `text` ("Mar", "March"), or undefined. */
function monthNamed(text: string): number | undefined {
  const index = MONTHS.indexOf(text.slice(0, 3).toLowerCase());
  return index < 0 ? undefined : index + 1;
}

/** A date as `YYYY-MM-DD`: ISO, `M/D/YYYY` (the order a US date field shows), `YYYY/M/D`, or with the month named. */
export function dateValue(text: string): string | undefined {
  const t = text.trim();
  let m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(t);
  if (m) return validDate(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})$/.exec(t);
  if (m) return validDate(Number(m[3]), Number(m[1]), Number(m[2]));
  m = /^([a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})$/i.exec(t);
  if (m && monthNamed(m[1]!)) return validDate(Number(m[3]), monthNamed(m[1]!)!, Number(m[2]));
  m = /^(\d{1,2})(?:st|nd|rd|th)? ([a-z]+)\.?,? (\d{4})$/i.exec(t);
  if (m && monthNamed(m[2]!)) return validDate(Number(m[3]), monthNamed(m[2]!)!, Number(m[1]));
  return undefined;
}

/** A time as `HH:MM` (or `HH:MM:SS`): 24-hour, or 12-hour with AM/PM ("3:57 PM", "3:57pm"). */
export function timeValue(text: string): string | undefined {
  const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(?:([ap])\.?\s*m\.?)?$/i.exec(text.trim());
  if (!m) return undefined;
  let hours = Number(m[1]);
  const minutes = Number(m[2]);
  const seconds = m[3] === undefined ? undefined : Number(m[3]);
  const half = m[4]?.toLowerCase();
  if (half) {
    if (hours < 1 || hours > 12) return undefined;
    hours = (hours % 12) + (half === 'p' ? 12 : 0);
  }
  if (hours > 23 || minutes > 59 || (seconds ?? 0) > 59) return undefined;
  return `${pad(hours)}:${pad(minutes)}${seconds === undefined ? '' : `:${pad(seconds)}`}`;
}

/** A date and a time as `YYYY-MM-DDTHH:MM`: ISO, or a date and a time in the forms above, in either order. */
export function dateTimeValue(text: string): string | undefined {
  const t = text.trim();
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(t)) return dateValue(t.slice(0, 10)) && timeValue(t.slice(11)) ? t : undefined;
  const time = /\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?\s*m\.?)?/i.exec(t);
  if (!time) return undefined;
  const rest = `${t.slice(0, time.index)} ${t.slice(time.index + time[0].length)}`;
  const date = dateValue(
    rest
      .replace(/\bat\b/gi, ' ')
      .replace(/^[\s,]+|[\s,]+$/g, '')
      .replace(/\s+/g, ' '),
  );
  const clock = timeValue(time[0]);
  return date && clock ? `${date}T${clock}` : undefined;
}

/** A month as `YYYY-MM`: ISO, `M/YYYY`, or named ("March 2016"). */
export function monthValue(text: string): string | undefined {
  const t = text.trim();
  let m = /^(\d{4})-(\d{1,2})$/.exec(t);
  let year: number | undefined;
  let month: number | undefined;
  if (m) [year, month] = [Number(m[1]), Number(m[2])];
  else if ((m = /^(\d{1,2})[/.-](\d{4})$/.exec(t))) [year, month] = [Number(m[2]), Number(m[1])];
  else if ((m = /^([a-z]+)\.?,? (\d{4})$/i.exec(t))) [year, month] = [Number(m[2]), monthNamed(m[1]!)];
  return year !== undefined && month !== undefined && month >= 1 && month <= 12 ? `${pad(year, 4)}-${pad(month)}` : undefined;
}

/** A week as `YYYY-Www`: ISO, or "week 12, 2016" / "2016 week 12". */
export function weekValue(text: string): string | undefined {
  const t = text.trim();
  const m = /^(\d{4})-?W(\d{1,2})$/i.exec(t) ?? /^(\d{4}),? week (\d{1,2})$/i.exec(t);
  const flipped = m ? undefined : /^week (\d{1,2}),? (\d{4})$/i.exec(t);
  const [year, week] = m ? [Number(m[1]), Number(m[2])] : flipped ? [Number(flipped[2]), Number(flipped[1])] : [NaN, NaN];
  return week >= 1 && week <= 53 ? `${pad(year, 4)}-W${pad(week)}` : undefined;
}

/**
 * The value to set on a picker field of input type `type` for the typed text; undefined when the text is
 * no such value. A colour is passed on as written (the page reads CSS colours); a range takes a number.
 */
export function pickerValue(type: string, text: string): string | undefined {
  switch (type) {
    case 'date':
      return dateValue(text);
    case 'time':
      return timeValue(text);
    case 'datetime-local':
      return dateTimeValue(text);
    case 'month':
      return monthValue(text);
    case 'week':
      return weekValue(text);
    case 'range':
      return text.trim() !== '' && Number.isFinite(Number(text)) ? String(Number(text)) : undefined;
    case 'color':
      return text.trim() || undefined;
    default:
      return undefined;
  }
}

/** Whether a field typed into holds the typed text, as its type keeps it (a one-line input drops line breaks, an email field trims). */
export function holdsTyped(field: FieldState, text: string): boolean {
  const value = field.value;
  switch (field.type) {
    case 'textarea':
      return value === text.replace(/\r\n?/g, '\n');
    case 'contenteditable':
      return value.replace(/\s+/g, ' ').trim() === text.replace(/\s+/g, ' ').trim();
    case 'number':
      return value !== '' && Number(value) === Number(text.trim());
    case 'email':
      return value === text.replace(/[\r\n]/g, '').trim();
    default:
      return value === text.replace(/[\r\n]/g, '');
  }
}

/** Whether a picker field holds the value set on it (a range may have moved it to its nearest step or bound). */
export function holdsPicked(field: FieldState, wanted: string): boolean {
  return field.type === 'range' ? Number(field.value) === Number(wanted) : field.value === wanted;
}
