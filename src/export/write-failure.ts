/** errno codes of a write refused for lack of space (EDQUOT: the user's quota on the file system). */
const NO_SPACE_CODES = new Set(['ENOSPC', 'EDQUOT']);

const NO_SPACE = 'no space left for the export file';

/** Why writing an export file failed, as the task's failure says it (a full disk in words an operator acts on). */
export function exportWriteFailure(error: unknown, file: string): string {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  if (code && NO_SPACE_CODES.has(code)) return `${NO_SPACE} ${file} (${code}): its file system is full`;
  return `writing ${file} failed: ${code ? `${code}: ` : ''}${message}`;
}

/** Whether a task failed because its file could not be written for lack of space (HTTP 507 for a synchronous export). */
export function isNoSpaceFailure(failure: string | null | undefined): boolean {
  return failure?.startsWith(NO_SPACE) ?? false;
}
