// Who the page works as, said on the page: "Signed in as …" with a way out, or, where the service
// needs a credential and the page has none, how to get in (never a bare "HTTP 401").
import * as api from "./api.js";

const HOW_TO_GET_IN = [
  "This grader needs to know who you are before it grades your code. Open the personal link ",
  "your instructor sent you (it ends in #student_token=…), or open this exercise from your ",
  "course's page in your learning platform (Canvas, Moodle, …).",
].join("");

function text(tag, content) {
  const node = document.createElement(tag);
  node.textContent = content;
  return node;
}

// The line that names the linked student, with a Sign out button (for a shared computer); or the
// student the page acts as on an open service, with the way back to acting as staff.
export function showStudent(who) {
  if (api.actingAsStudent) {
    const back = text("a", "Act as staff again");
    back.href = window.location.pathname;
    who.replaceChildren("Acting as student ", text("strong", api.student), " (attempt budgets apply) · ", back);
    who.hidden = false;
    // The other pages of the service go on acting as the same student.
    for (const link of document.querySelectorAll("a[href^='/exercises']")) link.search = window.location.search;
    return;
  }
  const signOut = text("button", "Sign out");
  signOut.type = "button";
  signOut.className = "link";
  signOut.addEventListener("click", () => {
    api.signOut();
    window.location.reload();
  });
  who.replaceChildren("Signed in as ", text("strong", api.student), " · ", signOut);
  who.hidden = false;
}

// The notice that says how to get in; `reason` is what the service said of a refused link.
export function showHowToGetIn(notice, reason) {
  const heading = text("strong", reason ? `You are signed out: ${reason}.` : "Sign in to submit.");
  notice.replaceChildren(heading, " ", HOW_TO_GET_IN);
  notice.hidden = false;
}

// True when the page can't submit: the service needs a credential and the page has none.
export function needsSignIn(data) {
  return data.keysRequired && !api.signedIn;
}
