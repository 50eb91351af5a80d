/**
 * Orders names by UTF-16 code units, as `<` compares them: the order of every listing in
 * the index (statuses, capabilities, actors) and of the tie-breaks between objects.
 */
export function compareNames(a: string, b: string): number {
  if (a < b) return -1;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: callers sort distinct names, and V8's sort only asks whether the result is negative.
  return a > b ? 1 : 0;
}
