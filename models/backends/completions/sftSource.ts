/** Where phase 0's SFT data for a completions actor comes from: a file here, or an object in the campaign's store. */
import { readFile } from 'node:fs/promises';
import type { ArtifactStore } from '../../../storage/artifactStore';
import { readSftData, SftDataError, type ChatRenderer, type SftPair } from '../../train/sftData';
import type { CompletionsActorSettings } from './settings';

/** The SFT data file's pairs, every problem listed (models/train/sftData.ts); read from here or from the store. */
export async function sftDataPairs(actor: CompletionsActorSettings, render: ChatRenderer | undefined, store: ArtifactStore | undefined): Promise<SftPair[]> {
  const source = actor.sftData;
  if (!source) return [];
  let text: string;
  if (source.path !== undefined) {
    try {
      text = await readFile(source.path, 'utf8');
    } catch (error) {
      throw new SftDataError(`models.actor.sftData.path (${source.path})`, [`cannot read the file: ${(error as NodeJS.ErrnoException).code ?? error}`]);
    }
  } else {
    if (!store) throw new Error(`models.actor.sftData.key ${source.key} needs the campaign's store`);
    text = (await store.getBytes(source.key!)).toString('utf8');
  }
  const where = source.path !== undefined ? `models.actor.sftData.path (${source.path})` : `models.actor.sftData.key (${source.key})`;
  return readSftData(where, text, source.format, render);
}
