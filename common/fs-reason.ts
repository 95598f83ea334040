/**
 * Why a file could not be read, in words a user acts on: `is a directory`, `no such file or directory`,
 * `permission denied`, …; otherwise the system error code (or the message when there is none).
 */
export function fsReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case 'EISDIR':
      return 'is a directory';
    case 'ENOENT':
      return 'no such file or directory';
    case 'ENOTDIR':
      return 'a parent of it is not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    default:
      return code ?? (error instanceof Error ? error.message : String(error));
  }
}
