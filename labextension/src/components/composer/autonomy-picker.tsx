/**
 * How much Hermes may do in this session's notebook (docs/autonomy.md): Ask, Propose (the
 * default), Agent, and "Agent, no asking" where the server allows it (its `max_autonomy`; a
 * server that does not say is offered every level and answers a refusal in its own words).
 * Choosing one is recorded by the server for the session's next turns.
 */
import React, { useState } from 'react';

import { plainError } from '../../api/plain-errors';
import { AUTONOMY_HELP, AUTONOMY_WORDS, Autonomy, autonomyOf, capOf, isAutonomy, offeredLevels } from '../../model/autonomy';

export interface IAutonomyPickerProps {
  /** The open session as the server sent it (its `autonomy`, `max_autonomy`). */
  session: { session_id?: string } | null;
  /** Record the level with the server; rejects with its refusal. */
  onChange: (level: Autonomy) => Promise<unknown>;
}

export function AutonomyPicker(props: IAutonomyPickerProps): JSX.Element | null {
  const { session } = props;
  const sid = session?.session_id ?? '';
  // What this view set, until the session it belongs to is replaced by the server's next copy.
  const [chosen, setChosen] = useState<{ sid: string; level: Autonomy; from: unknown } | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<{ text: string; details?: string } | null>(null);
  if (!session) {
    return null;
  }
  const mine = chosen && chosen.sid === sid && chosen.from === session ? chosen.level : null;
  const value = mine ?? autonomyOf(session);
  const levels = offeredLevels(capOf(session), value);
  const change = async (level: Autonomy) => {
    setBusy(true);
    setProblem(null);
    try {
      await props.onChange(level);
      setChosen({ sid, level, from: session });
    } catch (error) {
      const plain = plainError(error);
      setProblem({ text: plain.text, details: plain.details });
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <select
        className="jp-HermesAutonomy"
        data-testid="hermes-autonomy"
        data-hermes-autonomy={value}
        aria-label="What Hermes may do in the notebook"
        title={`${AUTONOMY_WORDS[value]}: ${AUTONOMY_HELP[value]}`}
        value={value}
        disabled={busy}
        onChange={event => isAutonomy(event.target.value) && void change(event.target.value)}
      >
        {levels.map(level => (
          <option key={level} value={level} title={AUTONOMY_HELP[level]} data-hermes-autonomy-option={level}>
            {AUTONOMY_WORDS[level]}
          </option>
        ))}
      </select>
      {problem && (
        <span className="jp-HermesAutonomy-problem" role="alert" data-hermes-autonomy-problem="" title={problem.details}>
          {problem.text}
        </span>
      )}
    </>
  );
}
