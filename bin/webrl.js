#!/usr/bin/env node
// The project runs its TypeScript directly (no build step): register tsx, then hand over to the CLI.
import { register } from 'tsx/esm/api';

// The project supports Node 20; the AWS SDK's notice about its future Node 22 floor is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
await import('../cli/main.ts');
