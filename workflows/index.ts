// Every workflow a worker registers; bundled once per worker process.
export { artifactRoundTrip } from './artifactRoundTrip';
export { campaignWorkflow } from './campaign';
