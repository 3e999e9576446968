const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** A Unix time as Go's time.Time.String() prints it in UTC: `2006-01-02 15:04:05 +0000 UTC`. */
export function goTimeString(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000 UTC`;
}
