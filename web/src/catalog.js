// The list of exercises: where a student link without an exercise lands. Importing api.js keeps
// the link's token for every exercise page; this script only says who is signed in.
import * as api from "./api.js";
import { needsSignIn, showHowToGetIn, showStudent } from "./signin.js";

const data = JSON.parse(document.getElementById("catalog-data").textContent);

if (api.student) showStudent(document.getElementById("who"));
else if (needsSignIn(data)) showHowToGetIn(document.getElementById("sign-in"));
document.body.dataset.ready = "true";
