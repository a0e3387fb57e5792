// Sizes as answers and log lines show them; below the tools, so a service can word its own problems.
/** Human size: `512 B`, `4.2 KB`, `1.3 MB` (1024-based). */
export function formatBytes (bytes: number): string {
  if (bytes < 0) return '? B'
  if (bytes < 1024) return `${bytes} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++ }
  return `${value >= 100 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`
}
