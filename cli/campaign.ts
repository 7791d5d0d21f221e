/**
 * `webrl campaign start|status|pause|resume|stop|retry-phase|set|list|report`.
 */
import type { Command } from 'commander';
import type { Client } from '@temporalio/client';
import { writeFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import {
  campaignProgress,
  changePhaseSettings,
  listCampaigns,
  parseForkPoint,
  pauseCampaign,
  resumeCampaign,
  retryFailedPhase,
  startCampaign,
  stopCampaignAfterPhase,
} from '../campaign/control';
import { readPhaseManifests } from '../campaign/manifest';
import { writeHtmlReport } from '../campaign/htmlReport';
import { runMainJob } from '../campaign/mainJob';
import { phaseEvidence, readEvaluations } from '../campaign/evidence';
import { ormAgreement, renderActorTrainingText, renderEvidenceText, renderPhaseTableText, renderSuccessChartSvg } from '../campaign/report';
import { loadSettings, type Settings } from '../infra/settings';
import { ArtifactStore } from '../storage/artifactStore';
import { connectClient } from '../temporal/connection';
import type { CampaignProgress, PhaseSettings } from '../workflows/campaignTypes';
import { stackEndpoints } from '../infra/stack';
import { UsageError } from './errors';
import {
  sitePortOverrides,
  stackOverrides,
  withOutageFlag,
  withSitePortFlags,
  withStackFlags,
  type OutageFlags,
  type SitePortFlags,
  type StackFlags,
} from './flags';

const say = (message: string) => console.log(message);

interface CommonFlags {
  config?: string;
  name?: string;
}

async function withClient<T>(flags: CommonFlags, run: (client: Client, settings: Settings, name: string) => Promise<T>): Promise<T> {
  const settings = await loadSettings(flags.config, process.env, { 'campaign.name': flags.name });
  const client = await connectClient(settings.config, settings.secrets);
  try {
    return await run(client, settings, settings.config.campaign.name);
  } finally {
    await client.connection.close();
  }
}

/** The campaign's state in a few lines; with `table` (the default), its per-phase table after them. */
export function describeProgress(progress: CampaignProgress, options: { table?: boolean } = {}): string {
  const lines = [
    `campaign ${progress.campaignId}: ${progress.status}, phase ${progress.phase} of ${progress.phases}` +
      (progress.activity ? ` (running ${progress.activity})` : ''),
  ];
  if (progress.failure) {
    lines.push(`  failed: ${progress.failure.activity} in phase ${progress.failure.phase}: ${progress.failure.message}`);
    lines.push('  retry it with: webrl campaign retry-phase');
  }
  for (const [name, value] of Object.entries(progress.counts)) lines.push(`  ${name}: ${value}`);
  if ((options.table ?? true) && progress.history.length) lines.push('', renderPhaseTableText(progress.history));
  return lines.join('\n');
}

/** `key=value` pairs (values parsed as YAML scalars/lists) into a partial settings object. */
function parseAssignments(pairs: string[]): Partial<PhaseSettings> {
  const update: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`expected key=value, got '${pair}'`);
    update[pair.slice(0, at)] = parseYaml(pair.slice(at + 1));
  }
  return update as Partial<PhaseSettings>;
}

/** The report's text (table, whether each phase helped, where the chart and the HTML report went), from the phase manifests. */
export async function writeReport(settings: Settings, name: string, out: { svg: string; html?: string }): Promise<string> {
  const store = new ArtifactStore(settings.config.s3, settings.secrets.s3);
  try {
    const manifests = await readPhaseManifests(store, name);
    if (!manifests.length) return `campaign ${name} has no published phase yet`;
    const summaries = manifests.map((m) => m.data.summary);
    const evidence = phaseEvidence(name, await readEvaluations(store, manifests));
    await writeFile(out.svg, renderSuccessChartSvg(`WebRL campaign ${name}: test-split success per phase`, summaries, evidence));
    const agreement = await Promise.all(manifests.map((m) => ormAgreement(store, m.data)));
    const evidenceText = renderEvidenceText(evidence);
    const lines = [
      renderPhaseTableText(summaries, agreement),
      ...(evidenceText ? ['', evidenceText] : []),
      '',
      renderActorTrainingText(manifests.map((m) => m.data)),
      '',
      `chart: ${out.svg}`,
    ];
    if (out.html) {
      const html = await writeHtmlReport(store, name, out.html);
      if (html) lines.push(`HTML report (${html.trajectories} trajectories, ${html.screenshots} screenshots): ${html.index}`);
    }
    return lines.join('\n');
  } finally {
    store.destroy();
  }
}

function withCommon(command: Command): Command {
  return command
    .option('-c, --config <file>', 'campaign file (YAML or JSON)')
    .option('-n, --name <name>', 'campaign name (default: campaign.name of the config)');
}

export function registerCampaignCommands(program: Command): void {
  const campaign = program.command('campaign').description('start, watch and steer training campaigns');

  withOutageFlag(
    withSitePortFlags(
      withStackFlags(
        withCommon(
          campaign
            .command('run')
            .description('the main job: local stack, worker, campaign (started or attached), live progress, report')
            .option('--phases <n>', 'RL phases after SFT (default 3)')
            .option('--seed <n>', 'campaign seed')
            .option('--no-curriculum', 'the ablation: tasks drawn from the train split instead of evolved from failures')
            .option('-o, --out <file>', 'SVG chart path', 'campaign-report.svg')
            .option('--html <dir>', 'HTML report directory (trajectories step by step)', 'campaign-report'),
        ),
      ),
    ),
  ).action(
    async (
      flags: CommonFlags & StackFlags & SitePortFlags & OutageFlags & { phases?: string; seed?: string; curriculum: boolean; out: string; html: string },
    ) => {
      const number = (value?: string) => (value === undefined ? undefined : /^\d+$/.test(value) ? Number(value) : value);
      const loaded = await loadSettings(flags.config, process.env, {
        'campaign.name': flags.name,
        'campaign.phases': number(flags.phases),
        'campaign.seed': number(flags.seed),
        ...(flags.curriculum ? {} : { 'campaign.phase.curriculum': false }),
        ...stackOverrides(flags),
        ...sitePortOverrides(flags),
      });
      // Ctrl-C ends the watch and stops the worker; the campaign itself goes on waiting in Temporal.
      const interrupt = new AbortController();
      const onInterrupt = () => interrupt.abort();
      process.once('SIGINT', onInterrupt);
      process.once('SIGTERM', onInterrupt);
      try {
        const { outcome, settings } = await runMainJob(loaded, say, { interrupt: interrupt.signal, outageLimitMs: flags.outageLimit * 1000 });
        const name = settings.config.campaign.name;
        if (outcome.kind === 'interrupted') {
          const where = outcome.progress ? ` at phase ${outcome.progress.phase} of ${outcome.progress.phases}` : '';
          say(`stopped: campaign ${name} waits in Temporal${where}; run the same command to attach to it again`);
          process.exitCode = 130;
          return;
        }
        say(describeProgress(outcome.progress, { table: false }));
        say('');
        say(await writeReport(settings, name, { svg: flags.out, html: flags.html }));
      } finally {
        process.off('SIGINT', onInterrupt);
        process.off('SIGTERM', onInterrupt);
      }
    },
  );

  withCommon(
    campaign
      .command('start')
      .description('start a campaign (workers must be running: webrl worker)')
      .option('--from <campaign:phase>', "continue from another campaign's published phase (e.g. an ablation sharing its SFT: --from main:0)"),
  ).action(async (flags: CommonFlags & { from?: string }) =>
    withClient(flags, async (client, settings) => {
      const store = new ArtifactStore(settings.config.s3, settings.secrets.s3);
      try {
        const from = flags.from ? parseForkPoint(flags.from) : undefined;
        const handle = await startCampaign(client, store, settings.config, from ? { from } : {});
        say(`started ${handle.workflowId}`);
        say(`watch it: ${stackEndpoints(settings.config).temporalUi}/namespaces/${settings.config.temporal.namespace}/workflows/${handle.workflowId}`);
      } finally {
        store.destroy();
      }
    }),
  );

  withCommon(campaign.command('status').description('phase, activity, counts and success so far')).action(async (flags: CommonFlags) =>
    withClient(flags, async (client, _settings, name) => say(describeProgress(await campaignProgress(client, name)))),
  );

  // Signals: each names the campaign's next state once it is sent.
  const signals = [
    ['pause', 'pause before the next activity', pauseCampaign, 'pauses before its next activity'],
    ['resume', 'resume a paused campaign', resumeCampaign, 'resumed'],
    ['stop', 'stop after the current phase is published', stopCampaignAfterPhase, 'stops after its current phase'],
  ] as const;
  for (const [command, description, send, outcome] of signals) {
    withCommon(campaign.command(command).description(description)).action(async (flags: CommonFlags) =>
      withClient(flags, async (client, _settings, name) => {
        await send(client, name);
        say(`campaign ${name} ${outcome}`);
      }),
    );
  }

  withCommon(campaign.command('retry-phase').description('re-run the failed phase from its inputs')).action(async (flags: CommonFlags) =>
    withClient(flags, async (client, _settings, name) => {
      const phase = await retryFailedPhase(client, name);
      say(`campaign ${name}: retrying phase ${phase}`);
    }),
  );

  withCommon(
    campaign
      .command('set')
      .description('change settings for the next phase, e.g. tasksPerPhase=200 criticBand=[0.1,0.7]')
      .argument('<assignments...>', 'key=value pairs'),
  ).action(async (assignments: string[], flags: CommonFlags) =>
    withClient(flags, async (client, _settings, name) => {
      const next = await changePhaseSettings(client, name, parseAssignments(assignments));
      say(`next phase settings: ${JSON.stringify(next)}`);
    }),
  );

  withCommon(campaign.command('list').description('campaigns on this Temporal namespace')).action(async (flags: CommonFlags) =>
    withClient(flags, async (client) => {
      for (const c of await listCampaigns(client)) {
        const rate = c.successRate === undefined ? '' : ` success ${(100 * c.successRate).toFixed(1)}%`;
        say(`${c.workflowId.padEnd(32)} ${c.status.padEnd(22)} phase ${c.phase ?? '-'}${rate}  started ${c.started.toISOString()}`);
      }
    }),
  );

  withCommon(
    campaign
      .command('report')
      .description('per-phase table and success chart (SVG) from the phase manifests; --html adds a static site with every trajectory')
      .option('-o, --out <file>', 'SVG chart path', 'campaign-report.svg')
      .option('--html <dir>', 'also write the HTML report (opens from disk) into this directory'),
  ).action(async (flags: CommonFlags & { out: string; html?: string }) => {
    const settings = await loadSettings(flags.config, process.env, { 'campaign.name': flags.name });
    say(await writeReport(settings, settings.config.campaign.name, { svg: flags.out, ...(flags.html ? { html: flags.html } : {}) }));
  });
}
