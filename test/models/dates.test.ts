/** Dates named by an intent, read off the text and written in a date field's placeholder format. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dateFormat, formatDate, intentDates } from '../../models/dates';

describe('dates', () => {
  test('an intent names whole days and months; a month gives its first and last day', () => {
    assert.deepEqual(intentDates('Set its due date to Apr 21, 2026'), [{ date: { year: 2026, month: 4, day: 21 }, part: 'day' }]);
    assert.deepEqual(
      intentDates('orders from 3 March 2022 to 2022-03-09').map((d) => d.date),
      [
        { year: 2022, month: 3, day: 3 },
        { year: 2022, month: 3, day: 9 },
      ],
    );
    assert.deepEqual(intentDates('What are the top-2 best-selling products in February 2024?'), [
      { date: { year: 2024, month: 2, day: 1 }, part: 'month-start' },
      { date: { year: 2024, month: 2, day: 29 }, part: 'month-end' },
    ]);
    assert.deepEqual(intentDates('You may 2 times click; Feb 30, 2023 is no day'), [], 'neither a verb nor an impossible date is a date');
  });

  test('a placeholder is a date format only with one year, one month and one day part', () => {
    assert.equal(dateFormat('M/D/YY'), 'M/D/YY');
    assert.equal(dateFormat(' yyyy-mm-dd '), 'YYYY-MM-DD');
    assert.equal(dateFormat('DD.MM.YYYY'), 'DD.MM.YYYY');
    for (const other of ['Search by keyword', 'MM/DD', 'M/M/YY', 'YYYY-MM/DD', '']) assert.equal(dateFormat(other), undefined, other);
  });

  test('a date is written in the format, padded where the format pads', () => {
    const date = { year: 2023, month: 5, day: 1 };
    assert.equal(formatDate(date, 'M/D/YY'), '5/1/23');
    assert.equal(formatDate(date, 'YYYY-MM-DD'), '2023-05-01');
    assert.equal(formatDate({ year: 2005, month: 12, day: 31 }, 'DD.MM.YY'), '31.12.05');
  });
});
