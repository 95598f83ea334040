/**
 * The order check both of Harbor's Terminus 2 parsers make (`_check_field_order` in
 * terminus_json_plain_parser.py, `_check_section_order` in terminus_xml_plain_parser.py, Harbor
 * 6c9ba3f0): with at least two of the `expected` names present, a different order of their first
 * occurrences gives one warning naming both orders.
 */
export function orderWarning(
  noun: 'Fields' | 'Sections',
  expected: readonly string[],
  firstIndexOf: (name: string) => number | undefined,
): string | undefined {
  const positions = new Map<string, number>();
  for (const name of expected) {
    const index = firstIndexOf(name);
    if (index !== undefined) positions.set(name, index);
  }
  if (positions.size < 2) return undefined;
  const present = expected.filter((name) => positions.has(name));
  const actual = present.toSorted((a, b) => (positions.get(a) as number) - (positions.get(b) as number));
  if (actual.join() === present.join()) return undefined;
  return `${noun} appear in wrong order. Found: ${actual.join(' → ')}, expected: ${present.join(' → ')}`;
}
