/**
 * `webrl export` (a phase's experience for an outside trainer) and `webrl schema training-record`
 * (the JSON Schema of the training records, generated from their zod type).
 */
import type { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { phaseExperience, webrlItemOf } from '../campaign/exportExperience';
import { loadSettings } from '../config/settings';
import { trainingRecordJsonSchema } from '../models/train/trainingRecord';
import { ArtifactStore } from '../storage/artifactStore';

export function registerExportCommands(program: Command): void {
  program
    .command('export')
    .description("a phase's experience as training records (JSONL) or in WebRL's trainer layout (JSON)")
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
      if (flags.format !== 'records' && flags.format !== 'webrl') throw new Error(`--format must be records or webrl, got '${flags.format}'`);
      const settings = await loadSettings(flags.config, process.env, { 'campaign.name': flags.name });
      const store = new ArtifactStore(settings.config.s3, settings.secrets.s3);
      try {
        const name = settings.config.campaign.name;
        const { rows, records } = await phaseExperience(store, name, flags.phase, settings.config.campaign.training.gamma);
        const text =
          flags.format === 'records'
            ? records.map((record) => `${JSON.stringify(record)}\n`).join('')
            : `${JSON.stringify(rows.map((row, i) => webrlItemOf(row, records[i]!)))}\n`;
        await writeFile(flags.out, text);
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
