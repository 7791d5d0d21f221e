/** Evaluation metrics of the models (bench and card metrics). */

/** ROC AUC of scores against binary labels (ties count half); NaN when either class is absent. */
export function rocAuc(scores: readonly number[], labels: readonly boolean[]): number {
  const order = scores.map((score, i) => ({ score, label: labels[i]! })).sort((a, b) => a.score - b.score);
  let positives = 0;
  let negatives = 0;
  let rankSum = 0;
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j < order.length && order[j]!.score === order[i]!.score) j++;
    const averageRank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) {
      if (order[k]!.label) {
        positives++;
        rankSum += averageRank;
      } else negatives++;
    }
    i = j;
  }
  if (positives === 0 || negatives === 0) return NaN;
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

/** Share of predictions (probability >= threshold) that equal the labels. */
export function accuracy(probabilities: readonly number[], labels: readonly boolean[], threshold = 0.5): number {
  if (labels.length === 0) return NaN;
  return probabilities.filter((p, i) => p >= threshold === labels[i]).length / labels.length;
}
