// Ink's Text `color` prop for a color that may be absent: Text declares `color?: string` and takes
// no explicit undefined, so no color is no prop (the terminal's own color).

/** `{ color }` when there is one, `{}` otherwise: spread into a Text. */
export function colorProp(color: string | undefined): { color?: string } {
  return color === undefined ? {} : { color };
}
