/**
 * The variable picker: the notebook kernel's variables (name, type, size) to choose one from,
 * instead of typing a name. What is attached is the server's summary of it (docs/attachments.md).
 */
import React from 'react';

import type { IVariableListing, IVariableRow } from '../../api/client';

export type PickerState =
  | { status: 'loading' }
  | { status: 'failed'; message: string }
  | { status: 'ready'; listing: IVariableListing };

export interface IVariableListProps {
  state: PickerState;
  selected: string | null;
  filter: string;
  onFilter(text: string): void;
  onSelect(name: string): void;
  /** Choose and attach at once (double click, Enter on a row). */
  onChoose(name: string): void;
}

/** Rows that match the filter (by name or type, any case). */
export function matching(rows: IVariableRow[], filter: string): IVariableRow[] {
  const wanted = filter.trim().toLowerCase();
  return wanted ? rows.filter(r => r.name.toLowerCase().includes(wanted) || r.type.toLowerCase().includes(wanted)) : rows;
}

/** The picker as it looks for a state: pure, so it renders the same in tests. */
export function VariableList(props: IVariableListProps): JSX.Element {
  const { state } = props;
  if (state.status === 'loading') {
    return <div className="jp-HermesVariables" data-testid="hermes-variables" data-state="loading">Reading the kernel's variables…</div>;
  }
  if (state.status === 'failed') {
    return (
      <div className="jp-HermesVariables" data-testid="hermes-variables" data-state="failed" role="alert">
        {state.message}
      </div>
    );
  }
  const { variables, more } = state.listing;
  if (variables.length === 0) {
    return (
      <div className="jp-HermesVariables" data-testid="hermes-variables" data-state="empty">
        The kernel has no variables yet. Run a cell that defines one, then open this list again.
      </div>
    );
  }
  const rows = matching(variables, props.filter);
  return (
    <div className="jp-HermesVariables" data-testid="hermes-variables" data-state="ready">
      {variables.length > 8 && (
        <input
          className="jp-HermesVariables-filter"
          type="search"
          aria-label="Filter variables"
          placeholder="Filter by name or type"
          value={props.filter}
          onChange={event => props.onFilter(event.target.value)}
        />
      )}
      <ul className="jp-HermesVariables-list" role="listbox" aria-label="Kernel variables">
        {rows.map(row => (
          <VariableOption key={row.name} row={row} selected={row.name === props.selected} onSelect={props.onSelect} onChoose={props.onChoose} />
        ))}
      </ul>
      {rows.length === 0 && <div className="jp-HermesVariables-none">No variable matches “{props.filter}”.</div>}
      {more > 0 && <div className="jp-HermesVariables-more">{more} more variables are not listed.</div>}
    </div>
  );
}

/** One variable: a click or Space selects it, a double click or Enter chooses it. */
function VariableOption(props: {
  row: IVariableRow;
  selected: boolean;
  onSelect(name: string): void;
  onChoose(name: string): void;
}): JSX.Element {
  const { row } = props;
  return (
    <li
      role="option"
      tabIndex={0}
      aria-selected={props.selected}
      className="jp-HermesVariables-row"
      data-testid="hermes-variable"
      data-name={row.name}
      onClick={() => props.onSelect(row.name)}
      onDoubleClick={() => props.onChoose(row.name)}
      onKeyDown={event => {
        if (event.key === 'Enter') {
          event.preventDefault();
          props.onChoose(row.name);
        } else if (event.key === ' ') {
          event.preventDefault();
          props.onSelect(row.name);
        }
      }}
    >
      <span className="jp-HermesVariables-name">{row.name}</span>
      <span className="jp-HermesVariables-type">{row.type}</span>
      <span className="jp-HermesVariables-size">{row.size ?? ''}</span>
    </li>
  );
}

/** The picker with its state: loads the listing once, reports the selection to its owner. */
export function VariablePicker(props: {
  load(): Promise<IVariableListing>;
  onSelect(name: string | null): void;
  onChoose(name: string): void;
}): JSX.Element {
  const [state, setState] = React.useState<PickerState>({ status: 'loading' });
  const [selected, setSelected] = React.useState<string | null>(null);
  const [filter, setFilter] = React.useState('');
  const { load, onSelect } = props;
  React.useEffect(() => {
    let live = true;
    load().then(
      listing => live && setState({ status: 'ready', listing }),
      error => live && setState({ status: 'failed', message: error instanceof Error ? error.message : String(error) })
    );
    return () => {
      live = false;
    };
  }, [load]);
  const select = (name: string): void => {
    setSelected(name);
    onSelect(name);
  };
  return (
    <VariableList
      state={state}
      selected={selected}
      filter={filter}
      onFilter={setFilter}
      onSelect={select}
      onChoose={name => {
        select(name);
        props.onChoose(name);
      }}
    />
  );
}
