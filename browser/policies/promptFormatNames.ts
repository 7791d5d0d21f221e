/**
 * How a step's prompt was rendered and which end-of-turn text closes a response the trainer scores:
 * `webrl-llama3` (the released WebRL checkpoints' completion prompt; end of turn `<|eot_id|>`) or
 * `chat-template` (the model's own chat template; end of turn what it writes after an assistant message).
 * promptFormat.ts renders them; the external trainer is told one (models/train/trainerContract.ts). The
 * names live apart, without I/O, because the config lists them and the workflow bundle imports the config.
 */
export const PROMPT_FORMATS = ['webrl-llama3', 'chat-template'] as const;
export type PromptFormatName = (typeof PROMPT_FORMATS)[number];
