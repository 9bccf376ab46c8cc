// An exercise's policy in a small form (GET and PUT .../policy): which score the gradebook takes,
// and an optional attempt budget (N attempts per window, refilled evenly). The due date and late
// policy are set through the API: the form sends them back as it read them.
import { h } from "../dom.js";

const DUE_FIELDS = ["due_at", "late_policy", "penalty_per_day"];

const HOUR_S = 3600;

function field(label, input) {
  return h("p", {}, h("label", { for: input.id }, label), input);
}

export function policyForm(api, slug, onSaved) {
  const gradebook = h("select", { id: "policy-gradebook", name: "gradebook" }, h("option", { value: "best" }, "best score"), h("option", { value: "latest" }, "latest score"));
  const attempts = h("input", { id: "policy-attempts", name: "attempts", type: "number", min: "1", step: "1", inputmode: "numeric" });
  const hours = h("input", { id: "policy-hours", name: "hours", type: "number", min: "0.1", step: "any", inputmode: "decimal" });
  const line = h("p", { id: "policy-status", class: "status", role: "status" });
  const save = h("button", { type: "submit" }, "Save the policy");
  const form = h(
    "form",
    { class: "panel", id: "policy", "aria-labelledby": "policy-heading" },
    h("h3", { id: "policy-heading" }, "Policy"),
    h("div", { class: "fields" }, field("Gradebook takes", gradebook), field("Attempts", attempts), field("per hours", hours)),
    h("p", { class: "facts" }, "Leave the attempts and hours empty for no budget."),
    save,
    line,
  );

  let due = {};
  api
    .policy(slug)
    .then((policy) => {
      due = Object.fromEntries(DUE_FIELDS.map((name) => [name, policy[name]]));
      gradebook.value = policy.gradebook;
      attempts.value = policy.attempts ?? "";
      hours.value = policy.window_s ? String(policy.window_s / HOUR_S) : "";
    })
    .catch((error) => {
      line.textContent = `Could not read the policy: ${error.message}`;
    });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const budget = attempts.value !== "";
    if (budget !== (hours.value !== "")) {
      line.textContent = "Give both the attempts and the hours, or neither.";
      return;
    }
    const policy = {
      ...due,
      gradebook: gradebook.value,
      attempts: budget ? Number(attempts.value) : null,
      window_s: budget ? Math.round(Number(hours.value) * HOUR_S) : null,
    };
    save.disabled = true;
    try {
      await api.savePolicy(slug, policy);
      line.textContent = "Saved.";
      onSaved("Policy saved.");
    } catch (error) {
      line.textContent = `Not saved: ${error.message}`;
    } finally {
      save.disabled = false;
    }
  });
  return form;
}
