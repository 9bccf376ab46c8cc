// Elements built as DOM nodes, never from HTML strings: what the pages show (messages, printed
// output, student ids) is other people's text.
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return node;
}
