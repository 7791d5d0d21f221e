/**
 * `webrl export` (a phase's experience for an outside trainer) and `webrl schema training-record`
 * (the JSON Schema of the training records, generated from their zod type).
 */
import type { Command } from 'commander';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { phaseExperience, webrlTrainerData } from '../campaign/exportExperience';
import { loadSettings } from '../infra/settings';
import { trainingRecordJsonSchema } from '../models/train/trainingRecord';
import { ArtifactStore } from '../storage/artifactStore';
import { ensureTrainerEnvironment, packageDir, run } from '../trainers/torch/environment';
import { UsageError } from './errors';

/** The file WebRL's trainer torch.loads, written by the trainer's environment, shuffled by the campaign's seed. */
async function writeWebRLFile(data: unknown, out: string, seed: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'webrl-export-'));
  try {
    const items = join(dir, 'items.json');
    await writeFile(items, JSON.stringify(data));
    const python = ensureTrainerEnvironment();
    const code = run(python, ['-m', 'webrl_torch.cli', 'export-webrl', '--items', items, '--out', out, '--seed', String(seed)], packageDir);
    if (code !== 0) throw new Error(`webrl-torch export-webrl exited with ${code}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function registerExportCommands(program: Command): void {
  program
    .command('export')
    .description(
      "a phase's experience as training records (JSONL) or as the file WebRL's trainer loads (torch.load; a flat step list when the name holds _filter, else trajectory lists)",
    )
    .requiredOption('-p, --phase <k>', 'phase number', (value) => {
      const phase = Number(value);
      if (!Number.isInteger(phase) || phase < 0) throw new Error(`--phase must be a phase number, got '${value}'`);
      return phase;
    })
    .option('-f, --format <format>', 'records | webrl', 'records')
    .requiredOption('-o, --out <file>', 'output file')
    .option('-c, --config <file>', 'campaign file (YAML or JSON)')
    .option('-n, --name <name>', 'campaign name (default: campaign.name of the config)')
    .action(async (flags: { phase: number; format: string; out: string; config?: string; name?: string }) => {
      if (flags.format !== 'records' && flags.format !== 'webrl') throw new UsageError(`--format must be records or webrl, got '${flags.format}'`);
      const settings = await loadSettings(flags.config, process.env, { 'campaign.name': flags.name });
      const store = new ArtifactStore(settings.config.s3, settings.secrets.s3);
      try {
        const name = settings.config.campaign.name;
        const { rows, records } = await phaseExperience(store, name, flags.phase, settings.config.campaign.training.gamma);
        if (flags.format === 'records') await writeFile(flags.out, records.map((record) => `${JSON.stringify(record)}\n`).join(''));
        else await writeWebRLFile(webrlTrainerData(rows, records, basename(flags.out).includes('_filter')), resolve(flags.out), settings.config.campaign.seed);
        console.log(`${records.length} steps of campaign ${name} phase ${flags.phase} written to ${flags.out} (${flags.format})`);
      } finally {
        store.destroy();
      }
    });

  program
    .command('schema')
    .description('JSON Schemas of the data this project writes for outside tools')
    .command('training-record')
    .description('the JSON Schema of a training record (schemaVersion 1)')
    .action(() => console.log(JSON.stringify(trainingRecordJsonSchema(), null, 2)));
}
