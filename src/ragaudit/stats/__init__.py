"""Is the improvement real?  Paired statistics, power planning and label agreement.

* :func:`compare_runs` / :func:`compare_all`: paired intervals (score, betting
  (Waudby-Smith-Ramdas) or bootstrap, each row naming its method), permutation p-values,
  McNemar's exact test and verdicts for two (or every pair of) saved runs;
* :func:`paired_bootstrap`, :func:`paired_permutation_test` (exact whenever affordable),
  :func:`mcnemar_exact`: the tests;
* :func:`choose_interval`, :func:`is_binary`, :func:`mean_interval`, :func:`paired_interval`:
  the one interval policy (0/1 -> exact or score; paired -> the sign-flip test inverted;
  one sample in [0, 1] -> betting; otherwise bootstrap);
* :func:`paired_difference_interval` (McNemar's exact test inverted; Tango, Newcombe),
  :func:`proportion_interval` (Clopper-Pearson, Wilson): intervals for binary data that cover;
* :func:`verdict`, :func:`format_pvalue`: the verdict rule (the exact test) and the one p-value
  display rule; :func:`no_change_sentence`: what a comparison without a change rules out;
* :func:`signflip_interval`, :func:`cluster_signflip`: the interval that inverts the verdict's
  (cluster) sign-flip test, so it excludes 0 exactly when the verdict is SIGNIFICANT;
* :func:`paired_mde`, :func:`run_mde`: the minimum detectable effect beside a number, with
  what it assumes;
* :func:`mcnemar_power`, :func:`minimum_detectable_effect`, :func:`planning_table`: exact
  power of McNemar's test, for sizing a golden set;
* :func:`cohen_kappa`, :func:`label_agreement`: agreement between two labellers;
* :func:`holm_bonferroni`: multiple-comparison adjustment;
* :func:`pair_runs`, :func:`aligned_values`: two runs' values of a metric on their common
  questions (with the checks and warnings of a comparison, or without, to read one made);
* :func:`cluster_mean_interval`: the interval ``--cluster-by`` prints for a mean (or paired
  difference) of values in [0, 1] when questions are clustered: betting over whole clusters;
* :func:`clustered_mean`, :func:`clustered_rate`, :func:`clustered_paired_difference`:
  cluster-robust (CR1) standard errors and design effects, and the Korn-Graubard interval
  (it undercovers with few clusters and rates near 1: ``benchmarks/coverage_clustered.py``; the
  cluster bootstrap, which undercovers too (coverage 0.15 there), is not exported);
* :func:`judge_noise`: judge noise versus question sampling noise;
* :func:`run_mean_interval` (a saved run's mean, repeats clustered by question),
* :func:`variance_budget`, :func:`repeated_mean_interval`, :func:`pass_k`,
  :func:`flaky_questions`, :func:`allocate_repeats`, :func:`plan_repeats`: repeated
  generations of each question (between questions, generations and judge calls; pass^k and
  pass@k; flaky questions; how many questions and repeats a budget should buy);
* :func:`ppi_mean`, :func:`ppi_rate_small_sample`, :func:`human_only_mean`,
  :func:`human_only_rate`, :func:`judge_only_mean`: prediction-powered
  (PPI++) intervals for a judged rate calibrated against human labels;
* :func:`questions_needed`, :func:`design_effect_from_icc`: golden-set size for a target
  effect, inflated for clustered questions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit._lazy import lazy_package

if TYPE_CHECKING:
    from ragaudit.stats._inputs import (
        PairedMetrics,
        PerQuestionMetrics,
        aligned_values,
        pair_runs,
    )
    from ragaudit.stats.agreement import AgreementResult, cohen_kappa, label_agreement
    from ragaudit.stats.bounded import bounded_mean_interval, paired_mean_interval
    from ragaudit.stats.cluster_betting import cluster_mean_interval
    from ragaudit.stats.cluster_signflip import ClusterSignFlip, cluster_signflip
    from ragaudit.stats.clustered import (
        ClusteredResult,
        clustered_mean,
        clustered_paired_difference,
        clustered_rate,
    )
    from ragaudit.stats.compare import (
        Comparison,
        MetricComparison,
        SubsampleInterval,
        compare_runs,
    )
    from ragaudit.stats.intervals import (
        IntervalResult,
        paired_difference_interval,
        proportion_interval,
    )
    from ragaudit.stats.judge_noise import JudgeNoiseResult, judge_noise, unanimous_share
    from ragaudit.stats.mcnemar import McNemarResult, mcnemar_exact, mcnemar_pvalue
    from ragaudit.stats.mde import MDE, paired_mde, run_mde
    from ragaudit.stats.multiple import holm_bonferroni
    from ragaudit.stats.pairwise import PairwiseMatrix, compare_all
    from ragaudit.stats.permutation import PermutationResult, paired_permutation_test
    from ragaudit.stats.policy import choose_interval, is_binary, mean_interval, paired_interval
    from ragaudit.stats.power import (
        PlanningRow,
        mcnemar_power,
        minimum_detectable_effect,
        planning_table,
    )
    from ragaudit.stats.ppi import (
        PPIResult,
        human_only_mean,
        human_only_rate,
        judge_only_mean,
        ppi_mean,
        ppi_rate_small_sample,
    )
    from ragaudit.stats.repeat_plan import RepeatPlan, plan_repeats
    from ragaudit.stats.repeated_runs import run_mean_interval
    from ragaudit.stats.repeats import (
        PassKResult,
        VarianceBudget,
        allocate_repeats,
        flaky_questions,
        pass_k,
        repeated_mean_interval,
        variance_budget,
    )
    from ragaudit.stats.resampling import BootstrapResult, ConfidenceInterval, paired_bootstrap
    from ragaudit.stats.sample_size import SampleSize, design_effect_from_icc, questions_needed
    from ragaudit.stats.signflip_interval import SignFlipInterval, signflip_interval
    from ragaudit.stats.verdicts import format_pvalue, no_change_sentence, verdict

_WHERE = {
    "PairedMetrics": "_inputs", "PerQuestionMetrics": "_inputs", "pair_runs": "_inputs",
    "aligned_values": "_inputs",
    "AgreementResult": "agreement",
    "cohen_kappa": "agreement", "label_agreement": "agreement",
    "bounded_mean_interval": "bounded", "paired_mean_interval": "bounded",
    "cluster_mean_interval": "cluster_betting",
    "ClusteredResult": "clustered", "clustered_mean": "clustered",
    "clustered_paired_difference": "clustered", "clustered_rate": "clustered",
    "Comparison": "compare",
    "MetricComparison": "compare", "SubsampleInterval": "compare", "compare_runs": "compare",
    "IntervalResult": "intervals", "paired_difference_interval": "intervals",
    "proportion_interval": "intervals", "JudgeNoiseResult": "judge_noise",
    "judge_noise": "judge_noise", "unanimous_share": "judge_noise",
    "McNemarResult": "mcnemar", "mcnemar_exact": "mcnemar",
    "mcnemar_pvalue": "mcnemar", "holm_bonferroni": "multiple", "PairwiseMatrix": "pairwise",
    "compare_all": "pairwise", "PermutationResult": "permutation",
    "paired_permutation_test": "permutation", "choose_interval": "policy",
    "is_binary": "policy", "mean_interval": "policy", "paired_interval": "policy",
    "PlanningRow": "power", "mcnemar_power": "power",
    "minimum_detectable_effect": "power", "planning_table": "power",
    "MDE": "mde", "paired_mde": "mde", "run_mde": "mde",
    "SignFlipInterval": "signflip_interval", "signflip_interval": "signflip_interval",
    "ClusterSignFlip": "cluster_signflip", "cluster_signflip": "cluster_signflip",
    "no_change_sentence": "verdicts",
    "PPIResult": "ppi", "human_only_mean": "ppi", "judge_only_mean": "ppi", "ppi_mean": "ppi",
    "human_only_rate": "ppi", "ppi_rate_small_sample": "ppi",
    "BootstrapResult": "resampling", "ConfidenceInterval": "resampling",
    "paired_bootstrap": "resampling", "SampleSize": "sample_size",
    "design_effect_from_icc": "sample_size", "questions_needed": "sample_size",
    "format_pvalue": "verdicts", "verdict": "verdicts",
    "PassKResult": "repeats", "VarianceBudget": "repeats", "allocate_repeats": "repeats",
    "flaky_questions": "repeats", "pass_k": "repeats", "repeated_mean_interval": "repeats",
    "variance_budget": "repeats", "run_mean_interval": "repeated_runs",
    "RepeatPlan": "repeat_plan", "plan_repeats": "repeat_plan",
}  # fmt: skip

__all__ = [
    "MDE",
    "AgreementResult",
    "BootstrapResult",
    "ClusterSignFlip",
    "ClusteredResult",
    "Comparison",
    "ConfidenceInterval",
    "IntervalResult",
    "JudgeNoiseResult",
    "McNemarResult",
    "MetricComparison",
    "PPIResult",
    "PairedMetrics",
    "PairwiseMatrix",
    "PassKResult",
    "PerQuestionMetrics",
    "PermutationResult",
    "PlanningRow",
    "RepeatPlan",
    "SampleSize",
    "SignFlipInterval",
    "SubsampleInterval",
    "VarianceBudget",
    "aligned_values",
    "allocate_repeats",
    "bounded_mean_interval",
    "choose_interval",
    "cluster_mean_interval",
    "cluster_signflip",
    "clustered_mean",
    "clustered_paired_difference",
    "clustered_rate",
    "cohen_kappa",
    "compare_all",
    "compare_runs",
    "design_effect_from_icc",
    "flaky_questions",
    "format_pvalue",
    "holm_bonferroni",
    "human_only_mean",
    "human_only_rate",
    "is_binary",
    "judge_noise",
    "judge_only_mean",
    "label_agreement",
    "mcnemar_exact",
    "mcnemar_power",
    "mcnemar_pvalue",
    "mean_interval",
    "minimum_detectable_effect",
    "no_change_sentence",
    "pair_runs",
    "paired_bootstrap",
    "paired_difference_interval",
    "paired_interval",
    "paired_mde",
    "paired_mean_interval",
    "paired_permutation_test",
    "pass_k",
    "plan_repeats",
    "planning_table",
    "ppi_mean",
    "ppi_rate_small_sample",
    "proportion_interval",
    "questions_needed",
    "repeated_mean_interval",
    "run_mde",
    "run_mean_interval",
    "signflip_interval",
    "unanimous_share",
    "variance_budget",
    "verdict",
]

lazy_package(__name__, _WHERE)
