/**
 * How the email oracle reads MiniWoB++'s email instructions, fixed and free wordings (the -nl and -nl-turk
 * pages' instructions as seeds 0-4 give them, and wordings where the sender comes second or first).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readEmailTask } from '../../env/backends/miniwob/oracles/email';

test('the fixed wording: sender, and the reply text, the forward recipient or the icon', () => {
  assert.deepEqual(readEmailTask('Find the email by Audrey and reply to them with the text "Vel quis. Semper.".'), {
    sender: 'Audrey',
    action: { kind: 'reply', text: 'Vel quis. Semper.' },
  });
  assert.deepEqual(readEmailTask('Find the email by Audrey and forward that email to Hedy.'), { sender: 'Audrey', action: { kind: 'forward', to: 'Hedy' } });
  assert.deepEqual(readEmailTask('Find the email by Gerta and click the trash icon to delete it.'), { sender: 'Gerta', action: { kind: 'delete' } });
  assert.deepEqual(readEmailTask('Find the email by Goldina and click the star icon to mark it as important.'), {
    sender: 'Goldina',
    action: { kind: 'important' },
  });
});

test("free wordings: the name marked as the sender (from, by, 's, sent, wrote) is the sender, the other the recipient", () => {
  const cases: [string, ReturnType<typeof readEmailTask>][] = [
    ['Give Bobine the message you received from Cora,', { sender: 'Cora', action: { kind: 'forward', to: 'Bobine' } }],
    ['Send Bettine the information Lidia sent to you.', { sender: 'Lidia', action: { kind: 'forward', to: 'Bettine' } }],
    ['Amargo is waiting for the email by Lissie.', { sender: 'Lissie', action: { kind: 'forward', to: 'Amargo' } }],
    ['Look for the email that Bobine wrote in this email app and forward it to Bevvy', { sender: 'Bobine', action: { kind: 'forward', to: 'Bevvy' } }],
    ["Open Patsy's email and forward it to Delores", { sender: 'Patsy', action: { kind: 'forward', to: 'Delores' } }],
    ["Bobine's email should be deleted from the inbox.", { sender: 'Bobine', action: { kind: 'delete' } }],
    ['Please find the email Patsy sent me and file it as important', { sender: 'Patsy', action: { kind: 'important' } }],
    ['Email Kiley the message, "Amet, a. Malesuada. Nunc."', { sender: 'Kiley', action: { kind: 'reply', text: 'Amet, a. Malesuada. Nunc.' } }],
  ];
  for (const [intent, expected] of cases) assert.deepEqual(readEmailTask(intent), expected, intent);
  assert.equal(readEmailTask('Please tidy up the inbox.'), undefined, 'no name: no plan');
});
