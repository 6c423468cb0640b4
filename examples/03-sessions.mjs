/**
 * Sessions and switching: the runtime holds the current session and replaces it — a new session,
 * a saved one (switchSession), a fork. `runtime.session` changes after each switch, so subscribe
 * again in onRebind(). Sessions are saved under <agentDir>/sessions/ (once they hold an answer).
 *
 *   node examples/03-sessions.mjs
 */
import { createAgentSession, SessionManager } from "pi-kernel";

const { runtime, services } = await createAgentSession(); // a new saved session for the cwd
await runtime.bindExtensions();

let turns = 0;
const follow = (session) => session.subscribe((event) => void (event.type === "agent_end" && turns++));
let unsubscribe = follow(runtime.session);
runtime.onRebind((session) => {
  unsubscribe();
  unsubscribe = follow(session);
});

await runtime.session.prompt("Remember the word: swordfish.");
const first = runtime.session.sessionFile;
console.log(`first session: ${runtime.session.sessionId} (${runtime.session.messages.length} messages)`);

await runtime.newSession();
await runtime.session.prompt("Which word did I ask you to remember?");
console.log(`new session: ${runtime.session.sessionId} (${runtime.session.messages.length} messages)`);

await runtime.switchSession(first);
console.log(`back in the first: ${runtime.session.sessionId} (${runtime.session.messages.length} messages)`);

// Fork from the first user message: the new session ends before it, and its text comes back.
const [firstUser] = runtime.session.getUserMessagesForForking();
const { selectedText } = await runtime.fork(firstUser.entryId);
console.log(`forked: ${runtime.session.messages.length} messages; the forked message was "${selectedText}"`);

const saved = await SessionManager.list(services.cwd);
console.log(`saved sessions for this folder: ${saved.length}`);
for (const info of saved) console.log(`  ${info.messageCount} messages: ${info.firstMessage}`);
console.log(`turns seen by the subscriptions: ${turns}`);
unsubscribe();
await runtime.dispose();
