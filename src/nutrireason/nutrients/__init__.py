"""Recipe nutrient estimation: NutriBench's task (Hua et al., arXiv 2407.12843: carbohydrate
estimation from meal descriptions, scored by Acc@7.5 g and the mean absolute error) on
NutriReason's recipes. Given a recipe's ingredient lines and servings, a model estimates the
carbohydrates and the energy of one serving; the gold is the recipe build's per-serving
nutrition, for recipes the build kept without a flag.

One package: its spec (:mod:`.spec`, registered by one line), its items (:mod:`.items`), its
build stage (:mod:`.stage`), its methods (:mod:`.methods`) and its report section
(:mod:`.report`).
"""
