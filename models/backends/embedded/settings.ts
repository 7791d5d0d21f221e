/** The embedded backend takes no settings: the ONNX models the campaign trains, its task evolution, its trainer and judge. */
import { nameOnly } from '../fields';

const embedded = nameOnly('embedded');

export const settings = { actor: embedded, critic: embedded, orm: embedded, trainer: embedded, taskGenerator: embedded, judge: embedded };
