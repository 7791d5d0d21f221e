/**
 * The campaign report as a static site (`webrl campaign report --html DIR`), read from storage alone:
 * an index with the per-phase table, whether each phase helped and the success chart; a page per
 * phase with whether it helped (overall and per task type), its task sets (tasks
 * generated, kept by the critic with its values, rolled out with their rewards, evaluated); and a page
 * per trajectory, step by step (the observation the actor saw, its answer, the ORM's verdict and the
 * evaluator's score, the screenshots the rollout kept). Plain HTML with relative links and the
 * screenshots copied beside it, so it opens from disk with no server.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EvaluationResult } from '../activities/campaign/controlActivities';
import type { RewardRow } from '../activities/campaign/trainActivities';
import type { TrajectoryRecord } from '../activities/campaign/episodes';
import type { TraceRow } from '../browser/traces';
import { taskTypeOf } from '../env/backends/registry';
import { verdict } from '../models/orm';
import type { ArtifactStore } from '../storage/artifactStore';
import { phaseKey } from '../storage/keys';
import { scrubText } from '../storage/scrub';
import type { PhaseSummary } from '../workflows/campaignTypes';
import { EVIDENCE_COLUMNS, evidenceCells, formatDifference, formatP, phaseEvidence, readEvaluations, changeVerdict, type PhaseEvidence } from './evidence';
import type { PhaseManifestData } from '../activities/campaign/phaseManifest';
import { readPhaseManifests } from './manifest';
import type { PairedDifference } from './statistics';
import { escapeHtml, ormAgreement, renderSuccessChartSvg } from './report';

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; }
pre { white-space: pre-wrap; word-break: break-word; background: #f8f8f8; border: 1px solid #ddd; padding: 8px; max-height: 24em; overflow: auto; font-size: 12px; }
.step { border-top: 2px solid #888; margin-top: 1.5em; padding-top: .5em; }
.step img { max-width: 100%; border: 1px solid #aaa; }
.ok { color: #0a7a0a; } .bad { color: #b00020; }
nav a { margin-right: 1em; }
`;

function page(title: string, body: string, home = 'index.html'): string {
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
    `<style>${STYLE}</style></head><body><nav><a href="${home}">campaign</a></nav><h1>${escapeHtml(title)}</h1>\n${body}\n</body></html>\n`
  );
}

function table(header: string[], rows: string[][]): string {
  const head = `<tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>`;
  return `<table>${head}${rows.map((r) => `<tr>${r.map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('')}</table>`;
}

async function tryJsonl<T>(store: ArtifactStore, key: string): Promise<T[]> {
  if (!(await store.exists(key))) return [];
  const rows: T[] = [];
  for await (const row of store.readJsonl<T>(key)) rows.push(row);
  return rows;
}

/** One trajectory of a phase: which pass it belongs to and what judged it. */
interface TrajectoryEntry {
  purpose: string;
  record: TrajectoryRecord;
  trajectoryKey: string;
  reward?: RewardRow;
  /** File name of its page, relative to the report's root. */
  file: string;
}

const safe = (text: string) => text.replace(/[^\w.=-]/g, '_');

async function phaseTrajectories(store: ArtifactStore, owner: string, phase: number, rewards: RewardRow[]): Promise<TrajectoryEntry[]> {
  const byKey = new Map(rewards.map((row) => [row.trajectoryKey, row]));
  const entries: TrajectoryEntry[] = [];
  for await (const { key } of store.list(`${phaseKey(owner, phase, 'rollouts')}/`)) {
    const match = /\/rollouts\/([^/]+)\/shard-\d+\/trajectories\/([^/]+)\.json$/.exec(key);
    if (!match) continue;
    const record = await store.getJson<TrajectoryRecord>(key);
    const reward = byKey.get(key);
    entries.push({
      purpose: match[1]!,
      record,
      trajectoryKey: key,
      ...(reward ? { reward } : {}),
      file: `trajectories/phase-${phase}-${safe(match[1]!)}-${safe(record.taskId)}.html`,
    });
  }
  return entries.sort((a, b) => a.purpose.localeCompare(b.purpose) || a.record.taskId.localeCompare(b.record.taskId, undefined, { numeric: true }));
}

function judgement(entry: TrajectoryEntry): string[] {
  const { record, reward } = entry;
  const orm = reward && reward.pYes !== null ? `${verdict(reward.pYes).reward ? 'YES' : 'NO'} (P(YES) ${reward.pYes.toFixed(3)})` : '-';
  const score = record.graded ? `<span class="${record.score === 1 ? 'ok' : 'bad'}">${record.score}</span>` : 'ungraded';
  return [orm, reward ? String(reward.reward) : '-', score];
}

async function writeTrajectoryPage(store: ArtifactStore, dir: string, phase: number, entry: TrajectoryEntry): Promise<number> {
  const { record } = entry;
  const rows = await tryJsonl<TraceRow>(store, record.traceKey);
  let screenshots = 0;
  const steps: string[] = [];
  for (const row of rows) {
    let image = '';
    if (row.screenshot && (await store.exists(row.screenshot))) {
      const file = `screenshots/phase-${phase}-${safe(entry.purpose)}-${safe(record.taskId)}-step-${row.index}.png`;
      await writeFile(join(dir, file), await store.getBytes(row.screenshot));
      image = `<p><img src="../${file}" alt="the page at step ${row.index}"></p>`;
      screenshots++;
    }
    const problem = row.parse_error ? `<p class="bad">unparseable: ${escapeHtml(JSON.stringify(row.parse_error))}</p>` : '';
    const failed = row.execution && !row.execution.ok ? `<p class="bad">the action failed: ${escapeHtml(row.execution.error ?? '')}</p>` : '';
    // The observation as the page gave it; the prompt held it only up to where it fit the model's context.
    const cut = row.observation_cut
      ? `<p class="bad">the prompt left out the observation's last ${row.observation_cut} characters (to fit the model's context)</p>`
      : '';
    steps.push(
      `<div class="step" id="step-${row.index}"><h2>Step ${row.index}</h2><p>URL: <code>${escapeHtml(row.url)}</code></p>${image}` +
        `<h3>Observation (as the actor saw it)</h3>${cut}<pre>${escapeHtml(row.html)}</pre>` +
        (row.model_prompt && row.model_prompt !== row.html
          ? `<details><summary>full model prompt</summary><pre>${escapeHtml(row.model_prompt)}</pre></details>`
          : '') +
        `<h3>Action</h3><pre>${escapeHtml(row.response)}</pre>${problem}${failed}</div>`,
    );
  }
  // Files the evaluator handed back (WebArena-Verified: the episode's network trace), copied beside the page.
  const files: string[] = [];
  for (const [name, key] of Object.entries(record.files ?? {})) {
    if (!(await store.exists(key))) continue;
    const file = `files/phase-${phase}-${safe(entry.purpose)}-${safe(record.taskId)}-${safe(name)}`;
    await writeFile(join(dir, file), await store.getBytes(key));
    files.push(`<a href="../${file}">${escapeHtml(name)}</a>`);
  }
  const [orm, reward, score] = judgement(entry);
  const summary = table(
    ['task', 'site', 'pass', 'steps', 'ended by', 'answer', 'ORM verdict', 'reward', 'evaluator score'],
    [
      [
        escapeHtml(record.taskId),
        escapeHtml(record.site),
        escapeHtml(entry.purpose),
        String(record.steps),
        escapeHtml(record.reason),
        escapeHtml(record.answer ?? '-'),
        orm!,
        reward!,
        score!,
      ],
    ],
  );
  const body =
    `<p><a href="../phase-${phase}.html">phase ${phase}</a></p><p><b>Intent:</b> ${escapeHtml(record.intent)}</p>${summary}` +
    (record.evaluation
      ? `<p><b>Evaluation:</b> ${escapeHtml(
          Object.entries(record.evaluation)
            .map(([k, v]) => `${k}: ${String(v)}`)
            .join('; '),
        )}</p>`
      : '') +
    (files.length ? `<p><b>Files:</b> ${files.join(', ')}</p>` : '') +
    (steps.length ? steps.join('\n') : '<p>No trace was stored for this trajectory.</p>');
  // Built from stored (already scrubbed) objects; scrubbed again in case a secret became known since.
  await writeFile(join(dir, entry.file), page(`Trajectory ${record.taskId} (phase ${phase}, ${entry.purpose})`, scrubText(body), '../index.html'));
  return screenshots;
}

interface CriticValueRow {
  taskId: string | number;
  v1?: number;
  v2?: number;
  value?: number;
  failed?: boolean;
}

/** One comparison in a sentence: the difference, its interval, the discordant tasks, McNemar's p and the verdict. */
function comparisonSentence(against: string, d: PairedDifference): string {
  return (
    `Against ${against}, over the ${d.pairs} tasks both evaluated: ${escapeHtml(formatDifference(d))} points (95% interval), ` +
    `${d.improved} solved now and not then, ${d.worsened} the other way (McNemar p ${escapeHtml(formatP(d.pValue))}): <b>${changeVerdict(d)}</b>.`
  );
}

/** The "did this phase help?" section of a phase's page: sentences for the whole evaluation, a table per task type. */
export function phaseHelpHtml(e: PhaseEvidence | undefined): string {
  const title = '<h2>Did this phase help?</h2>';
  if (!e) return `${title}<p>This phase's evaluation stored no per-task outcomes.</p>`;
  const sentences = [
    e.phase === 0 ? '<p>Phase 0 is SFT: the baseline every later phase is compared with, task by task.</p>' : '',
    e.vsSft?.overall.pairs ? `<p>${comparisonSentence('SFT (phase 0)', e.vsSft.overall)}</p>` : '',
    e.vsPrevious?.overall.pairs ? `<p>${comparisonSentence(`phase ${e.vsPrevious.phase}`, e.vsPrevious.overall)}</p>` : '',
  ].join('');
  const rows = [['all', ...evidenceCells(e)], ...Object.keys(e.byGroup).map((group) => [group, ...evidenceCells(e, group)])];
  return (
    title +
    sentences +
    table(
      ['task type', ...EVIDENCE_COLUMNS],
      rows.map((row) => row.map(escapeHtml)),
    ) +
    "<p>Success with its 95% Wilson interval; differences in points over the same tasks, with a paired bootstrap 95% interval and McNemar's exact p; better or worse when both agree (the interval excludes 0 and p &lt; 0.05).</p>"
  );
}

async function writePhasePage(
  store: ArtifactStore,
  dir: string,
  manifest: PhaseManifestData,
  evidence: PhaseEvidence | undefined,
): Promise<{ trajectories: TrajectoryEntry[]; screenshots: number }> {
  const phase = manifest.phase;
  // A phase taken over from another campaign keeps its artifacts under that campaign's keys.
  const owner = manifest.forkedFrom?.campaign ?? manifest.campaignId;
  const rewards = await tryJsonl<RewardRow>(store, manifest.artifacts.rewards.key);
  const candidates = await tryJsonl<{ task_id: string | number; sites: string[]; intent: string }>(store, phaseKey(owner, phase, 'tasks', 'candidates.jsonl'));
  const values = (await store.tryGetJson<CriticValueRow[]>(phaseKey(owner, phase, 'tasks', 'critic-values.json'))) ?? [];
  const kept = new Set((await tryJsonl<{ task_id: string | number }>(store, manifest.artifacts.tasks.key)).map((t) => String(t.task_id)));
  const valueOf = new Map(values.map((v) => [String(v.taskId), v]));
  const trajectories = await phaseTrajectories(store, owner, phase, rewards);

  let screenshots = 0;
  for (const entry of trajectories) screenshots += await writeTrajectoryPage(store, dir, phase, entry);

  const fmt = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(3));
  const generated = candidates.length
    ? table(
        ['task', 'site', 'intent', 'critic v1', 'critic v2', 'kept'],
        candidates.map((task) => {
          const value = valueOf.get(String(task.task_id));
          return [
            escapeHtml(String(task.task_id)),
            escapeHtml(task.sites.join(', ')),
            escapeHtml(task.intent),
            value?.failed ? 'failed' : fmt(value?.v1),
            value?.failed ? 'failed' : fmt(value?.v2),
            kept.has(String(task.task_id)) ? 'yes' : 'no',
          ];
        }),
      )
    : '<p>This phase generated no tasks (phase 0 starts from demonstrations).</p>';
  const section = (purpose: string, title: string) => {
    const entries = trajectories.filter((t) => t.purpose === purpose);
    if (!entries.length) return '';
    return (
      `<h2>${escapeHtml(title)} (${entries.length})</h2>` +
      table(
        ['task', 'site', 'intent', 'steps', 'ORM verdict', 'reward', 'evaluator score', ''],
        entries.map((entry) => [
          escapeHtml(entry.record.taskId),
          escapeHtml(entry.record.site),
          escapeHtml(entry.record.intent),
          String(entry.record.steps),
          ...judgement(entry),
          `<a href="${entry.file}">steps</a>`,
        ]),
      )
    );
  };
  const purposes = [...new Set(trajectories.map((t) => t.purpose))];
  const titles: Record<string, string> = { train: 'Rolled out (training)', probe: 'Rolled out (probe)', eval: 'Evaluated (held-out test tasks)' };
  const body =
    `<p>Test-split success ${percent(manifest.summary.successRate)}; ${manifest.summary.tasksKept} tasks kept; ` +
    `${manifest.summary.trajectories} trajectories, ${manifest.summary.rolloutSuccesses} rewarded.</p>` +
    phaseHelpHtml(evidence) +
    `<h2>Generated tasks (${candidates.length}), with the critic's values</h2>${generated}` +
    purposes.map((purpose) => section(purpose, titles[purpose] ?? `Rollouts: ${purpose}`)).join('\n');
  await writeFile(join(dir, `phase-${phase}.html`), page(`Phase ${phase}${phase === 0 ? ' (SFT)' : ''}`, body));
  return { trajectories, screenshots };
}

/**
 * Test-split success per task type and phase (the learning curve of each MiniWoB++ type) from each
 * phase's evaluated tasks, as a table and a chart; '' when no task has a type (other backends' tasks).
 */
export function taskTypeCurveHtml(
  campaignId: string,
  summaries: PhaseSummary[],
  evaluated: EvaluationResult['tasks'][],
  evidence: PhaseEvidence[] = [],
): string {
  const byPhase = evaluated.map((tasks) => {
    const scores = new Map<string, number[]>();
    for (const task of tasks) {
      const type = taskTypeOf(task.taskId);
      if (type) scores.set(type, [...(scores.get(type) ?? []), task.score]);
    }
    return Object.fromEntries([...scores].map(([type, xs]) => [type, xs.reduce((a, b) => a + b, 0) / xs.length]));
  });
  const types = [...new Set(byPhase.flatMap((m) => Object.keys(m)))].sort();
  if (!types.length) return '';
  const rows = summaries.map((s, i) => [
    s.phase === 0 ? '0 (SFT)' : String(s.phase),
    percent(s.successRate),
    ...types.map((type) => (type in byPhase[i]! ? percent(byPhase[i]![type]!) : '-')),
  ]);
  return (
    '<h2>Test-split success per task type</h2>' +
    table(['phase', 'all', ...types], rows) +
    renderSuccessChartSvg(
      `WebRL campaign ${campaignId}: test-split success per task type`,
      summaries.map((s, i) => ({ ...s, perSite: byPhase[i]! })),
      evidence,
    )
  );
}

export interface HtmlReportResult {
  index: string;
  phases: number;
  trajectories: number;
  screenshots: number;
}

/** Writes the report of `campaignId` into `dir`; undefined when the campaign has published no phase. */
export async function writeHtmlReport(store: ArtifactStore, campaignId: string, dir: string): Promise<HtmlReportResult | undefined> {
  const manifests = await readPhaseManifests(store, campaignId);
  if (!manifests.length) return undefined;
  await mkdir(join(dir, 'trajectories'), { recursive: true });
  await mkdir(join(dir, 'screenshots'), { recursive: true });
  await mkdir(join(dir, 'files'), { recursive: true });
  const summaries: PhaseSummary[] = manifests.map((m) => m.data.summary);
  const evaluations = await readEvaluations(store, manifests);
  const evidence = phaseEvidence(campaignId, evaluations);
  let trajectories = 0;
  let screenshots = 0;
  for (const manifest of manifests) {
    const written = await writePhasePage(
      store,
      dir,
      manifest.data,
      evidence.find((e) => e.phase === manifest.data.phase),
    );
    trajectories += written.trajectories.length;
    screenshots += written.screenshots;
  }
  const agreement = await Promise.all(manifests.map((m) => ormAgreement(store, m.data)));
  const sites = [...new Set(summaries.flatMap((s) => Object.keys(s.perSite)))].sort();
  const rows = summaries.map((s, i) => [
    `<a href="phase-${s.phase}.html">${s.phase === 0 ? '0 (SFT)' : s.phase}</a>`,
    percent(s.successRate),
    ...sites.map((site) => (site in s.perSite ? percent(s.perSite[site]!) : '-')),
    String(s.tasksGenerated),
    String(s.tasksKept),
    String(s.trajectories),
    String(s.rolloutSuccesses),
    String(s.replayedSteps),
    agreement[i] == null ? '-' : percent(agreement[i]),
  ]);
  const body =
    table(['phase', 'test success', ...sites, 'tasks generated', 'tasks kept', 'trajectories', 'rollout succ.', 'replayed', 'ORM = evaluator'], rows) +
    (evidence.length
      ? '<h2>Did each phase help?</h2>' +
        table(
          ['phase', ...EVIDENCE_COLUMNS],
          evidence.map((e) => [`<a href="phase-${e.phase}.html">${e.phase === 0 ? '0 (SFT)' : e.phase}</a>`, ...evidenceCells(e).map(escapeHtml)]),
        ) +
        "<p>Per task type, with the discordant tasks: each phase's page.</p>"
      : '') +
    renderSuccessChartSvg(`WebRL campaign ${campaignId}: test-split success per phase`, summaries, evidence) +
    taskTypeCurveHtml(
      campaignId,
      summaries,
      evaluations.map((e) => e.tasks),
      evidence,
    );
  const index = join(dir, 'index.html');
  await writeFile(index, page(`WebRL campaign ${campaignId}`, body));
  return { index, phases: manifests.length, trajectories, screenshots };
}
