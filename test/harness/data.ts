/** Data files the tests read; all inside the repository, so a clone of it alone runs the suite. */
import { fileURLToPath } from 'node:url';

/** The real WebArena-Lite test split (Apache-2.0, see NOTICE.md beside it). */
export const WEBARENA_LITE_TEST_FILE = fileURLToPath(new URL('../data/webarena-lite/test_webarena_lite.raw.json', import.meta.url));

/** The original WebArena test set, 812 tasks (Apache-2.0, see NOTICE.md beside it). */
export const WEBARENA_TEST_FILE = fileURLToPath(new URL('../data/webarena/test.raw.json', import.meta.url));
