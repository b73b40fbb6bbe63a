/**
 * Relative times for the session list ("just now", "5 min ago", "yesterday"),
 * with the exact local time for the row's title attribute.
 */

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** `seconds` (epoch seconds) relative to `now` (epoch ms), in plain words. */
export function relativeTime(seconds: number | undefined, now: number = Date.now()): string {
  if (!seconds) {
    return '';
  }
  const age = Math.max(0, now / 1000 - seconds);
  if (age < MINUTE) {
    return 'just now';
  }
  if (age < HOUR) {
    return `${Math.floor(age / MINUTE)} min ago`;
  }
  if (age < DAY) {
    const hours = Math.floor(age / HOUR);
    return `${hours} hour${hours === 1 ? '' : 's'} ago`;
  }
  if (age < 2 * DAY) {
    return 'yesterday';
  }
  if (age < 7 * DAY) {
    return `${Math.floor(age / DAY)} days ago`;
  }
  return new Date(seconds * 1000).toLocaleDateString();
}

/** The exact local date and time of `seconds` (epoch seconds). */
export function exactTime(seconds: number | undefined): string {
  return seconds ? new Date(seconds * 1000).toLocaleString() : '';
}
