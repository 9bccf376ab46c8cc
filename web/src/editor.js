// The code editor: CodeMirror 6 with Python highlighting, indentation and undo (basicSetup),
// Tab indenting (Esc then Tab leaves the editor), and the draft saved per exercise; and the same
// editor read-only, where staff read a student's code.
import { indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { indentUnit } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { basicSetup } from "codemirror";
import { load, save } from "./storage.js";

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
      EditorView.contentAttributes.of({ "aria-label": label, "aria-describedby": "editor-hint" }),
      EditorView.updateListener.of((update) => {
        if (!update.docChanged) return;
        clearTimeout(saveTimer);
        saveTimer = setTimeout(() => save(draftKey, update.state.doc.toString()), 300);
      }),
    ],
  });
  return {
    view,
    source: () => view.state.doc.toString(),
    replace(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
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
      EditorView.contentAttributes.of({ "aria-label": label }),
    ],
  });
}
