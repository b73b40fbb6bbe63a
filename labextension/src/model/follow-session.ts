/**
 * The sidebar follows every run of the selected session, whichever client
 * started it (a `%%hermes` cell, another tab, the CLI). The session list is
 * polled anyway; while the sidebar is visible it is polled faster, and when it
 * names an active run the open chat is not following, the chat re-reads the
 * session, which attaches to that run's stream (and shows Stop).
 */
import type { IChatModel } from './chat-model';
import { SessionsModel } from './sessions';

export function followSessionRuns(sessions: SessionsModel, chat: IChatModel): void {
  let asked: string | null = null;
  sessions.changed.connect(() => {
    const sid = chat.sessionId;
    const summary = sessions.sessions.find(s => s.session_id === sid);
    const active = summary?.active_stream_id ?? null;
    if (!active || chat.status !== 'idle' || chat.runId === active || asked === active) {
      return;
    }
    asked = active;
    void chat.reload();
  });
}
