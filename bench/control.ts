/**
 * How fast the main job recovers from a Temporal outage: `webrl campaign run` on a tiny campaign, the
 * Temporal dev server SIGKILLed during SFT and started again after the outage; the figure is the
 * time from the server's return to the next activity starting (a pending activity's new attempt or
 * a new activity, whichever Temporal records first).
 *
 * Run: node --import tsx bench/control.ts [outage seconds, default 20]. Ends with `BENCH` lines.
 */
import { Client, Connection } from '@temporalio/client';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { runWebrl, startWebrl } from '../test/harness/cli';
import { serverOutage, writeMainJobCampaign } from '../test/harness/mainJob';

const OUTAGE_S = Number(process.argv[2] ?? 20);
const CAMPAIGN_MS = 30 * 60_000;

/** When the campaign's current run next starts an activity (attempt) at or after `since`. */
async function nextActivityStart(client: Client, workflowId: string, since: number): Promise<number> {
  const handle = client.workflow.getHandle(workflowId);
  for (;;) {
    const description = await handle.describe().catch(() => undefined);
    const starts = (description?.raw.pendingActivities ?? [])
      .map((activity) => Number(activity.lastStartedTime?.seconds ?? 0) * 1000 + Math.floor((activity.lastStartedTime?.nanos ?? 0) / 1e6))
      .filter((at) => at >= since);
    const history = await handle.fetchHistory().catch(() => undefined);
    for (const event of history?.events ?? []) {
      if (!event.activityTaskStartedEventAttributes) continue;
      const at = Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6);
      if (at >= since) starts.push(at);
    }
    if (starts.length) return Math.min(...starts);
    await delay(200);
  }
}

const dir = await mkdtemp(join(tmpdir(), 'webrl-bench-control-'));
const campaign = await writeMainJobCampaign(dir, { name: 'outage-bench', seed: 11, phases: 1 });
try {
  const job = startWebrl(['campaign', 'run', '-c', campaign.configFile, '-o', join(dir, 'chart.svg')], { cwd: dir });
  await job.waitFor(/^phase 0\/1 · running · trainSft/m, CAMPAIGN_MS);
  console.log(`Temporal SIGKILLed during SFT; restarting it after ${OUTAGE_S} s`);
  const back = await serverOutage(campaign, 'temporal', OUTAGE_S * 1000);
  const connection = await Connection.connect({ address: `127.0.0.1:${campaign.temporalPort}` });
  const started = await nextActivityStart(new Client({ connection, namespace: 'webrl' }), 'campaign-outage-bench', back);
  await connection.close();
  const { code, output } = await job.exited;
  if (code !== 0) throw new Error(`the main job failed:\n${output}`);
  const waits = output.match(/does not answer; waiting for it to come back/g)?.length ?? 0;
  console.log(`campaign completed; outage messages: ${waits}`);
  console.log(`BENCH control.outage_recovery_s ${((started - back) / 1000).toFixed(2)} s`);
} finally {
  await runWebrl(['stack', 'down', '-c', campaign.configFile]);
  await rm(dir, { recursive: true, force: true });
}
