import { buildRecipe, resolveRecipeConfig } from './builder.ts';
import { renderCommandLines } from './render.ts';
import { FROZEN_RUN_ID } from './run-id.ts';

/** Where the golden renderings of the default recipe live, relative to the repository root. */
export const GOLDEN_DIR = 'fixtures/golden';

/** How to regenerate them, for failure messages. */
export const GOLDEN_UPDATE_COMMAND = 'npx node scripts/fixtures/update-golden.ts';

/**
 * The default recipe (every field at its default, run id frozen as Miles' launcher tests freeze it, an
 * empty environment: no W&B) rendered as the golden files: file name -> exact content.
 */
export function recipeGoldenFiles(): Record<string, string> {
  const recipe = buildRecipe(resolveRecipeConfig({ run_id: FROZEN_RUN_ID }, {}), {});
  return {
    'recipe-default.argv.json': `${JSON.stringify(recipe.argv, null, 2)}\n`,
    'recipe-default.env.json': `${JSON.stringify(recipe.env, null, 2)}\n`,
    'recipe-default.command.sh': `${renderCommandLines(recipe.groups)}\n`,
  };
}
