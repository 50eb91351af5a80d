import type { ComponentChildren } from 'preact';

/** A captioned table with column headers, scrolling sideways on its own when narrow (zoom). */
export function DataTable({
  caption,
  columns,
  children,
}: {
  caption: ComponentChildren;
  columns: readonly string[];
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
