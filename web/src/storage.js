// localStorage, when the browser lets this page have it: a framed page may be refused storage
// (third-party storage blocked), and then the page keeps working, forgetting on reload.

// The student id a page without a link or a launch submits as, this browser's own.
export const STUDENT_ID_KEY = "autograder:student-id";

const memory = new Map();

export function load(key) {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return memory.get(key) ?? null;
  }
}

export function save(key, value) {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    memory.set(key, value);
  }
}

export function forget(key) {
  try {
    window.localStorage.removeItem(key);
  } catch {
    // refused storage: only the memory copy exists
  }
  memory.delete(key);
}
