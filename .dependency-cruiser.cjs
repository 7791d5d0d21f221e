/* global module */
/**
 * The source tree's import rules (docs/architecture.md): no circle, and imports run down the floors.
 * Checked by `npm run lint` (`npm run depcruise`).
 */

/**
 * The floors, top to bottom: a room (top-level folder) imports only rooms on floors below its own. A
 * room's subfolder may stand on a floor of its own: models/backends builds the model roles from the
 * environments' tasks and the models below, and the config above composes its settings.
 */
const FLOORS = [
  ['bin'],
  ['cli'],
  ['campaign'],
  ['workers'],
  ['infra'],
  ['activities'],
  ['workflows'],
  ['temporal'],
  ['config'],
  ['models/backends'],
  ['env'],
  ['models'],
  ['storage'],
  ['browser'],
];

/** The bottom floor: leaf modules every floor may import; they import nothing of the project but each other. */
const LEAVES = ['config/secrets.ts', 'config/errors.ts', 'config/fields.ts', 'infra/tools.ts', 'storage/scrub.ts'];

/**
 * The only imports from a floor to a higher one, each type-only: the workflow names its activities'
 * types (`proxyActivities<typeof ...>`), as Temporal requires, without importing their code.
 */
const UPWARD_TYPE_IMPORTS = [
  { from: 'workflows/campaign.ts', to: 'activities/campaign/contract.ts' },
  { from: 'workflows/artifactRoundTrip.ts', to: 'activities/artifactTransfer.ts' },
];

const files = (paths) => `^(${paths.map((path) => path.replace(/[.]/g, '\\.')).join('|')})$`;
const rooms = (names) => `^(${names.join('|')})/`;
const leaves = files(LEAVES);
/** The subfolders that are rooms of their own (e.g. models/backends), judged on their own floor, not their parent's. */
const subRooms = FLOORS.flat().filter((room) => room.includes('/'));

const floorRules = FLOORS.slice(1).map((floor, index) => {
  const above = FLOORS.slice(0, index + 1).flat();
  const allowed = UPWARD_TYPE_IMPORTS.filter((arrow) => floor.includes(arrow.from.split('/')[0])).map((arrow) => arrow.to);
  return {
    name: `floor-${floor.join('-')}`,
    severity: 'error',
    comment: `${floor.join(', ')} must not import a higher floor (${above.join(', ')})`,
    from: { path: rooms(floor), pathNot: [leaves, ...subRooms.filter((room) => !floor.includes(room)).map((room) => rooms([room]))] },
    to: { path: rooms(above), pathNot: files([...LEAVES, ...allowed]) },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle ties its files into one piece: none may be understood, tested or replaced alone.',
      from: {},
      to: { circular: true },
    },
    ...floorRules,
    {
      name: 'leaves-import-leaves',
      severity: 'error',
      comment: 'A leaf module (the bottom floor) imports nothing of the project but other leaves.',
      from: { path: leaves },
      to: { path: rooms(FLOORS.flat()), pathNot: leaves },
    },
    ...UPWARD_TYPE_IMPORTS.map((arrow) => ({
      name: 'upward-imports-are-type-only',
      severity: 'error',
      comment: `${arrow.from} may name ${arrow.to}'s types only (the workflow bundle must not hold activity code)`,
      from: { path: files([arrow.from]) },
      to: { path: files([arrow.to]), dependencyTypesNot: ['type-only'] },
    })),
    {
      name: 'upward-imports-are-named',
      severity: 'error',
      comment: `only ${UPWARD_TYPE_IMPORTS.map((arrow) => arrow.from).join(' and ')} name activity types`,
      from: { path: rooms(['workflows']), pathNot: files(UPWARD_TYPE_IMPORTS.map((arrow) => arrow.from)) },
      to: { path: rooms(['activities']) },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.webrl|test|bench|trainers)/' },
    // A type-only import is still an arrow between two files: it counts.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
  },
};
