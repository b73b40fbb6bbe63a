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

/**
 * Levels chosen in this page, by session, until a copy of the session from the server shows them:
 * the chat keeps its copy of the session across turns (docs/transcript.md), so that copy can still
 * carry the level read before the choice.
 */
const chosenHere = new Map<string, Autonomy>();

/** The server accepted `level` for this session (shown until the session's copy says it). */
export function rememberAutonomy(sessionId: string, level: Autonomy): void {
  chosenHere.set(sessionId, level);
}

export function AutonomyPicker(props: IAutonomyPickerProps): JSX.Element | null {
  const { session } = props;
  const sid = session?.session_id ?? '';
  const [, setShown] = useState<Autonomy | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<{ text: string; details?: string } | null>(null);
  if (!session) {
    return null;
  }
  const told = autonomyOf(session);
  if (chosenHere.get(sid) === told) {
    chosenHere.delete(sid);  // the server's copy says it now: from here on it is the word
  }
  const value = chosenHere.get(sid) ?? told;
  const change = async (level: Autonomy) => {
    setBusy(true);
    setProblem(null);
    try {
      await props.onChange(level);
      rememberAutonomy(sid, level);
      setShown(level);
    } catch (error) {
      const plain = plainError(error);
      setProblem({ text: plain.text, details: plain.details });
    } finally {
      setBusy(false);
    }
  };
  const levels = offeredLevels(capOf(session), value);
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
