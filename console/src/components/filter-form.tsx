import { useState } from 'preact/hooks';

/** A filter field: a text box, a choice, or a local date and time. */
export interface FilterField {
  name: string;
  label: string;
  kind: 'text' | 'choice' | 'time';
  choices?: readonly string[];
}

export type FilterValues = Record<string, string>;

/**
 * A row of labelled filters; the values apply on submit (Enter or the Apply button), so
 * typing does not fire a request per key.
 */
export function FilterForm({
  fields,
  initial,
  onApply,
}: {
  fields: readonly FilterField[];
  initial: FilterValues;
  onApply: (values: FilterValues) => void;
}) {
  const [values, setValues] = useState(initial);
  const set = (name: string, value: string) => setValues((v) => ({ ...v, [name]: value }));
  return (
    <form
      class="filters"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(values);
      }}
    >
      {fields.map((field) => (
        <div class="field" key={field.name}>
          <label for={`filter-${field.name}`}>{field.label}</label>
          <FieldInput field={field} value={values[field.name] ?? ''} onInput={(v) => set(field.name, v)} />
        </div>
      ))}
      <div class="filter-actions">
        <button type="submit">Apply</button>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setValues({});
            onApply({});
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}

function FieldInput({
  field,
  value,
  onInput,
}: {
  field: FilterField;
  value: string;
  onInput: (v: string) => void;
}) {
  const input = (e: Event) => onInput((e.currentTarget as HTMLInputElement).value);
  if (field.kind === 'choice') {
    return (
      <select id={`filter-${field.name}`} name={field.name} value={value} onChange={input}>
        <option value="">any</option>
        {field.choices?.map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>
    );
  }
  return (
    <input
      id={`filter-${field.name}`}
      name={field.name}
      type={field.kind === 'time' ? 'datetime-local' : 'text'}
      step={1}
      value={value}
      onInput={input}
    />
  );
}
