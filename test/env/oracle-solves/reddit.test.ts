/** The oracle solves every sampled reddit task in real Chromium (score 1, ended by its exit). */
import { describeOracleSolves } from '../../harness/oracleEpisodes';

describeOracleSolves('reddit');
