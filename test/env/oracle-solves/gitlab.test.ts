/** The oracle solves every sampled gitlab task in real Chromium (score 1, ended by its exit). */
import { describeOracleSolves } from '../../harness/oracleEpisodes';

describeOracleSolves('gitlab');
