import { orderWarning } from './order-warning.ts';
import {
  autoCorrected,
  combineWarnings,
  joinWarnings,
  type ParsedCommand,
  type ParseResult,
} from './parse-result.ts';
import { PY_S, PY_W, PythonIndexError, parsePyFloat, pyFloat, pyStrip } from './python-text.ts';

/**
 * Terminus 2's XML reply parser, rule for rule (Harbor 6c9ba3f0
 * src/harbor/agents/terminus_2/terminus_xml_plain_parser.py). Where Harbor iterates a Python `set`
 * (missing sections, unknown tags) the order depends on the process' hash seed; here it is the
 * required-section order and the order of first appearance.
 */

const REQUIRED = ['analysis', 'plan', 'commands'] as const;
const SECTIONS = [...REQUIRED, 'task_complete'] as const;

function result(
  commands: readonly ParsedCommand[],
  isTaskComplete: boolean,
  error: string,
  warnings: readonly string[],
  analysis: string,
  plan: string,
): ParseResult {
  return { commands, isTaskComplete, error, warning: joinWarnings(warnings), analysis, plan };
}

/** L203–L233 `_check_extra_text`. */
function checkExtraText(response: string, warnings: string[]): void {
  const start = response.indexOf('<response>');
  const end = response.indexOf('</response>');
  if (start === -1) return;
  if (pyStrip(response.slice(0, start))) warnings.push('Extra text detected before <response> tag');
  if (end !== -1 && pyStrip(response.slice(end + '</response>'.length))) {
    warnings.push('Extra text detected after </response> tag');
    const total = response.split('<response>').length - 1;
    if (total > 1)
      warnings.push(
        `IMPORTANT: Only issue one <response> block at a time. You issued ${total} and only the first was executed.`,
      );
  }
}

/** L235–L246 `_extract_response_content`. */
function extractResponseContent(response: string): string {
  const start = response.indexOf('<response>');
  if (start === -1) return '';
  const end = response.indexOf('</response>', start);
  if (end === -1) return pyStrip(response.slice(start + '<response>'.length));
  return pyStrip(response.slice(start + '<response>'.length, end));
}

/** L268–L323 `_find_top_level_tags`. */
function findTopLevelTags(content: string): string[] {
  const tags: string[] = [];
  let depth = 0;
  let i = 0;
  while (i < content.length) {
    if (content[i] !== '<') {
      i += 1;
      continue;
    }
    const tagEnd = content.indexOf('>', i);
    if (tagEnd === -1) break;
    const inner = content.slice(i + 1, tagEnd);
    if (inner.startsWith('!') || inner.startsWith('?')) {
      i = tagEnd + 1;
      continue;
    }
    if (inner.startsWith('/')) {
      depth -= 1;
      i = tagEnd + 1;
      continue;
    }
    const selfClosing = inner.endsWith('/');
    // `tag_content.split()[0] if " " in tag_content else tag_content`: split() is Python's whitespace split.
    let name = inner;
    if (inner.includes(' ')) {
      const first = pyStrip(inner).split(new RegExp(`${PY_S}+`, 'u'))[0];
      // `"< >".split()[0]` raises IndexError in Harbor: the exception ends the agent run.
      if (!first) throw new PythonIndexError('list index out of range');
      name = first;
    }
    if (name.endsWith('/')) name = name.slice(0, -1);
    if (depth === 0) tags.push(name);
    if (!selfClosing) depth += 1;
    i = tagEnd + 1;
  }
  return tags;
}

/** `_check_section_order`. */
function checkSectionOrder(content: string, warnings: string[]): void {
  const warning = orderWarning(
    'Sections',
    REQUIRED,
    (section) => new RegExp(`<${section}(?:${PY_S}|>|/>)`, 'u').exec(content)?.index,
  );
  if (warning) warnings.push(warning);
}

/** `_extract_sections`: section texts (stripped), plus the missing/unknown/duplicate/order warnings. */
function extractSections(content: string, warnings: string[]): Map<string, string> {
  const sections = new Map<string, string>();
  for (const name of SECTIONS) {
    const full = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'u').exec(content);
    if (full) sections.set(name, pyStrip(full[1] ?? ''));
    else if (new RegExp(`<${name}${PY_S}*/>`, 'u').test(content)) sections.set(name, '');
    else if (content.includes(`<${name}></${name}>`)) sections.set(name, '');
  }
  for (const name of REQUIRED) if (!sections.has(name)) warnings.push(`Missing <${name}> section`);
  const expected = new Set<string>(SECTIONS);
  const unexpected = [...new Set(findTopLevelTags(content))].filter((tag) => !expected.has(tag));
  for (const tag of unexpected)
    warnings.push(`Unknown tag found: <${tag}>, expected analysis/plan/commands/task_complete`);
  for (const name of SECTIONS) {
    const count = content.match(new RegExp(`<${name}(?:${PY_S}|>|/>)`, 'gu'))?.length ?? 0;
    if (count > 1)
      warnings.push(
        name === 'commands'
          ? `IMPORTANT: Only issue one <commands> block at a time. You issued ${count} and only the first was executed.`
          : `Multiple <${name}> sections found`,
      );
  }
  checkSectionOrder(content, warnings);
  return sections;
}

/** `_check_attribute_issues`. */
function checkAttributeIssues(attributes: string, n: number, warnings: string[]): void {
  for (const m of attributes.matchAll(
    new RegExp(`(${PY_W}+)${PY_S}*=${PY_S}*([^"'${PY_S.slice(1, -1)}>]+)`, 'gu'),
  ))
    warnings.push(`Command ${n}: Attribute '${m[1]}' value should be quoted: ${m[1]}="${m[2]}"`);
  for (const m of attributes.matchAll(new RegExp(`(${PY_W}+)${PY_S}*=${PY_S}*'([^']*)'`, 'gu')))
    warnings.push(`Command ${n}: Use double quotes for attribute '${m[1]}': ${m[1]}="${m[2]}"`);
  for (const m of attributes.matchAll(new RegExp(`(${PY_W}+)${PY_S}*=`, 'gu')))
    if (m[1] !== 'duration')
      warnings.push(`Command ${n}: Unknown attribute '${m[1]}' - known attributes are: duration`);
}

const ENTITIES: ReadonlyArray<readonly [string, string]> = [
  ['&lt;', '<'],
  ['&gt;', '>'],
  ['&amp;', '&'],
  ['&quot;', '"'],
  ['&apos;', "'"],
];

/** `_parse_xml_commands` (it never reports an error). */
function parseXmlCommands(xml: string, warnings: string[]): ParsedCommand[] {
  const commands: ParsedCommand[] = [];
  const matches = [...xml.matchAll(/<keystrokes([^>]*)>([\s\S]*?)<\/keystrokes>/g)];
  matches.forEach((match, i) => {
    const attributes = match[1] ?? '';
    const keystrokes = match[2] ?? '';
    checkAttributeIssues(attributes, i + 1, warnings);
    let duration = pyFloat(1.0);
    const durationMatch = new RegExp(`duration${PY_S}*=${PY_S}*["']([^"']*)["']`, 'u').exec(attributes);
    if (durationMatch) {
      const raw = durationMatch[1] ?? '';
      const value = parsePyFloat(raw);
      if (value === undefined)
        warnings.push(`Command ${i + 1}: Invalid duration value '${raw}', using default 1.0`);
      else duration = pyFloat(value);
    } else warnings.push(`Command ${i + 1}: Missing duration attribute, using default 1.0`);
    if (i < matches.length - 1 && !keystrokes.endsWith('\n'))
      warnings.push(
        `Command ${i + 1} should end with newline when followed by another command. Otherwise the two commands will be concatenated together on the same line.`,
      );
    commands.push({ keystrokes, duration });
  });
  for (const [entity, char] of ENTITIES)
    if (xml.includes(entity))
      warnings.push(
        `Warning: ${entity} is read verbatim and not converted to ${char}. NEVER USE ${entity}, unless you want these exact characters to appear directly in the output.`,
      );
  if (xml.includes('\\r\\n'))
    warnings.push('Warning: \\r\\n line endings are not necessary - use \\n instead for simpler output');
  return commands;
}

/** `_try_parse_response`. */
function tryParse(response: string): ParseResult {
  const warnings: string[] = [];
  checkExtraText(response, warnings);
  const content = extractResponseContent(response);
  if (!content) return result([], false, 'No <response> tag found', warnings, '', '');
  const isComplete = new RegExp(`<task_complete>${PY_S}*true${PY_S}*</task_complete>`, 'iu').test(content);
  const sections = extractSections(content, warnings);
  const analysis = sections.get('analysis') ?? '';
  const plan = sections.get('plan') ?? '';
  const commandsContent = sections.get('commands') ?? '';
  if (!commandsContent) {
    if (sections.has('commands')) {
      if (!isComplete)
        warnings.push(
          "Commands section is empty; not taking any action. If you want to wait a specific amount of time please use `sleep`, but if you're waiting for a command to finish then continue to wait.",
        );
      return result([], isComplete, '', warnings, analysis, plan);
    }
    if (isComplete) return result([], true, '', warnings, analysis, plan);
    return result([], false, 'Missing <commands> section', warnings, analysis, plan);
  }
  const commands = parseXmlCommands(commandsContent, warnings);
  return result(commands, isComplete, '', warnings, analysis, plan);
}

/** `parse_response`: a failed parse tries the auto-fixes. */
export function parseXmlReply(response: string): ParseResult {
  const first = tryParse(response);
  if (!first.error) return first;
  // The only auto-fix looks for "Missing </response> closing tag", an error this parser never
  // produces (a missing closing tag is read to the end), so it never applies; kept for the rule.
  if (first.error.includes('Missing </response> closing tag')) {
    const corrected = tryParse(`${response.replace(/\s+$/u, '')}\n</response>`);
    if (corrected.error === '')
      return {
        ...corrected,
        warning: combineWarnings(
          autoCorrected('Missing </response> tag was automatically inserted'),
          corrected.warning,
        ),
      };
  }
  return first;
}
