// A token handed to a page in its address's fragment (never sent to a server), taken out of the
// address bar at once (bookmarks, history, shared screens): the exercise page's launch and link
// tokens, the dashboard's staff session.
export function takeFromFragment(name) {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const token = fragment.get(name);
  if (token) {
    fragment.delete(name);
    const rest = fragment.toString();
    const { pathname, search } = window.location;
    window.history.replaceState(window.history.state, "", pathname + search + (rest ? `#${rest}` : ""));
  }
  return token;
}
