// The lines of the student's code a report points at: a refusal's findings (a syntax error, a
// forbidden call) and the line a visible test raised at. Hidden tests never carry one.

// [{line, message}], one per line, in line order; a line several tests raised at names them all.
export function reportedLines(report) {
  const byLine = new Map();
  const add = (line, message) => {
    if (!line) return;
    const said = byLine.get(line);
    if (!said) byLine.set(line, [message]);
    else if (!said.includes(message)) said.push(message);
  };
  for (const finding of report.diagnosis) add(finding.line, finding.message);
  for (const test of report.tests) add(test.line, test.message);
  return [...byLine]
    .sort(([a], [b]) => a - b)
    .map(([line, messages]) => ({ line, message: messages.join("\n") }));
}

// "line 12" or "lines 3 and 12", for the status line.
export function saidLines(problems) {
  const lines = problems.map(({ line }) => line);
  if (lines.length === 1) return `line ${lines[0]}`;
  return `lines ${lines.slice(0, -1).join(", ")} and ${lines.at(-1)}`;
}
