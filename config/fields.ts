/**
 * Fields the parts' own settings schemas share (the store's, the sites', the model endpoints'). A leaf
 * module: a part that owns its settings imports these without importing the config that composes it.
 */
import { z } from 'zod';

export const port = z.number().int().min(1).max(65535);

/**
 * An http(s) URL without `user:password@`: a credential in a URL would be stored in the frozen config
 * and printed back by `config check` and by errors; accounts and keys come from the environment.
 */
export const httpUrl = z.url({ protocol: /^https?$/ }).refine((value) => !/^[a-z]+:\/\/[^/?#]*@/i.test(value), {
  message: 'a URL with credentials (user:password@) is not accepted: give the URL without them and the account through the environment',
});
