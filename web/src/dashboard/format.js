// Numbers as the dashboard writes them: shares as whole percents, scores as points, counts with
// the locale's separators, days as dates.

export const count = (n) => Number(n).toLocaleString("en");

export function percent(share) {
  if (share === null || share === undefined) return "–";
  return `${Math.round(share * 100)}%`;
}

export function score(value, max) {
  if (value === null || value === undefined) return "–";
  const short = (x) => String(Number.parseFloat(Number(x).toPrecision(4)));
  return `${short(value)} / ${short(max)}`;
}

export function when(iso) {
  return new Date(iso).toLocaleString("en", { dateStyle: "medium", timeStyle: "short" });
}

// "38% of failing students (190 of 500)": the share, and what it is a share of.
export function shareOf(part, whole, of) {
  const share = whole ? part / whole : 0;
  return `${percent(share)} of ${of} (${count(part)} of ${count(whole)})`;
}
