// The code editor: CodeMirror 6 with Python highlighting, indentation and undo (basicSetup),
// long lines wrapped under their indentation, Tab indenting (Esc then Tab leaves the editor), the
// draft saved per exercise, and the lines a report points at marked; and the same editor
// read-only, where staff read a student's code.
import { indentWithTab, isolateHistory } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { indentUnit } from "@codemirror/language";
import { forEachDiagnostic, lintGutter, setDiagnostics, setDiagnosticsEffect } from "@codemirror/lint";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { basicSetup } from "codemirror";
import { hangingIndent } from "./hanging_indent.js";
import { load, save } from "./storage.js";

// An edit that touches a marked line takes its mark away: the report spoke of the old line.
const editedMarksClear = EditorState.transactionExtender.of((tr) => {
  if (!tr.docChanged) return null;
  const kept = [];
  let touched = false;
  forEachDiagnostic(tr.startState, (diagnostic, from, to) => {
    if (tr.changes.touchesRange(from, to)) touched = true;
    else kept.push({ ...diagnostic, from: tr.changes.mapPos(from), to: tr.changes.mapPos(to) });
  });
  return touched ? { effects: setDiagnosticsEffect.of(kept) } : null;
});

export function createEditor(parent, { slug, starter, label }) {
  const draftKey = `autograder:draft:${slug}`;
  let saveTimer;
  const view = new EditorView({
    parent,
    doc: load(draftKey) ?? starter,
    extensions: [
      basicSetup,
      python(),
      indentUnit.of("    "),
      keymap.of([indentWithTab]),
      EditorView.lineWrapping,
      hangingIndent,
      lintGutter(),
      editedMarksClear,
      // tabindex: its scroller then holds focusable content by every checker's rules (axe-core
      // counts an element as focusable by its tag or tabindex, not by contenteditable).
      EditorView.contentAttributes.of({ "aria-label": label, "aria-describedby": "editor-hint", tabindex: "0" }),
      EditorView.updateListener.of((update) => {
        if (!update.docChanged) return;
        clearTimeout(saveTimer);
        saveTimer = setTimeout(() => save(draftKey, update.state.doc.toString()), 300);
      }),
    ],
  });
  // A reload right after typing (a submit, then a reload) keeps the last keystrokes too.
  window.addEventListener("pagehide", () => {
    clearTimeout(saveTimer);
    save(draftKey, view.state.doc.toString());
  });
  return {
    view,
    source: () => view.state.doc.toString(),
    // One step of its own in the history, however soon after typing: one Undo takes it back.
    replace(text) {
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: text },
        annotations: isolateHistory.of("full"),
      });
    },
    // Marks each {line, message} (lines from 1) and scrolls to the first; none clears them.
    mark(problems) {
      const doc = view.state.doc;
      const diagnostics = problems
        .filter(({ line }) => line >= 1 && line <= doc.lines)
        .map(({ line, message }) => {
          const { from, to } = doc.line(line);
          return { from, to, severity: "error", message };
        });
      const marking = setDiagnostics(view.state, diagnostics);
      const first = diagnostics[0];
      if (first) marking.effects = [marking.effects, EditorView.scrollIntoView(first.from, { y: "center" })].flat();
      view.dispatch(marking);
    },
  };
}

// Highlighted, selectable and searchable, never editable: Tab moves on (no indent keymap).
export function createViewer(parent, { source, label }) {
  return new EditorView({
    parent,
    doc: source,
    extensions: [
      basicSetup,
      python(),
      EditorState.readOnly.of(true),
      EditorView.contentAttributes.of({ "aria-label": label, tabindex: "0" }),
    ],
  });
}
