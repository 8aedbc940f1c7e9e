/**
 * Escaping for the viewer page. Log content (tool output above all) is untrusted: it reaches
 * the page only as JSON inside a non-executing script element, and the page script puts it in
 * the DOM with textContent. These two functions are the only ways anything enters the HTML.
 */

const XML: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** For text and attribute values in HTML and SVG markup. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML[c]!);
}

/**
 * JSON safe to place between `<script type="application/json">` and `</script>`: no `<` (so no
 * `</script>` or `<!--`), no `>` or `&`, and no U+2028 / U+2029 (line terminators to older JS
 * parsers). `JSON.parse` of the element's text gives back the exact value.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
