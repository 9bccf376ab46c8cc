// Wrapped lines keep their indentation: each line's continuation starts under its first
// non-blank character, not at the left edge, so a wrapped call inside a method still reads as
// part of that method. Only the lines in view are decorated.
import { RangeSetBuilder } from "@codemirror/state";
import { Decoration, ViewPlugin } from "@codemirror/view";

const WIDTHS = new Map();

// One decoration per indentation width, shared by every line of that width.
function hangingBy(columns) {
  if (!WIDTHS.has(columns)) {
    const style = `padding-left: calc(${columns}ch + 6px); text-indent: -${columns}ch`;
    WIDTHS.set(columns, Decoration.line({ attributes: { style } }));
  }
  return WIDTHS.get(columns);
}

function decorate(view) {
  const builder = new RangeSetBuilder();
  const tabSize = view.state.tabSize;
  for (const { from, to } of view.visibleRanges) {
    for (let pos = from; pos <= to; ) {
      const line = view.state.doc.lineAt(pos);
      const blank = /^[ \t]*/.exec(line.text)[0];
      const columns = [...blank].reduce((n, c) => (c === "\t" ? n + tabSize - (n % tabSize) : n + 1), 0);
      if (columns > 0 && columns < line.length) builder.add(line.from, line.from, hangingBy(columns));
      pos = line.to + 1;
    }
  }
  return builder.finish();
}

export const hangingIndent = ViewPlugin.fromClass(
  class {
    constructor(view) {
      this.decorations = decorate(view);
    }

    update(update) {
      if (update.docChanged || update.viewportChanged) this.decorations = decorate(update.view);
    }
  },
  { decorations: (plugin) => plugin.decorations },
);
