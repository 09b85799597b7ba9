//! A small NSGA-II (Deb et al., 2002) over discrete genomes, driven ask/tell: the tuner asks
//! for a configuration, measures it, and tells the optimiser its objectives.
//!
//! No maintained crate fits (the NSGA-II crates on crates.io are unmaintained since 2022 and
//! work on continuous genes with their own random generators), so this one is written here:
//! a genome is one knob index per layer; objectives are minimised; a configuration that
//! violates the tuning threshold is dominated by every one that does not (constrained
//! domination), the less it violates the better. Deterministic for a seed: the only
//! randomness is `giving_models::rng::Rng`.

use std::collections::HashSet;

use giving_models::rng::Rng;

use crate::pareto::{crowding, fronts};

/// A genome and what it scored.
#[derive(Debug, Clone)]
struct Individual {
    genome: Vec<usize>,
    objectives: Vec<f64>,
    violation: f64,
    rank: usize,
    crowding: f64,
}

/// The optimiser's state.
#[derive(Debug)]
pub struct Nsga2 {
    genes: usize,
    alleles: usize,
    population_size: usize,
    rng: Rng,
    population: Vec<Individual>,
    offspring: Vec<Individual>,
    seen: HashSet<Vec<usize>>,
}

impl Nsga2 {
    /// An optimiser of genomes of `genes` genes, each in `0..alleles` (0 is the baseline),
    /// with `population_size` individuals per generation.
    pub fn new(genes: usize, alleles: usize, population_size: usize, seed: u64) -> Self {
        Self {
            genes,
            alleles: alleles.max(1),
            population_size: population_size.max(4),
            rng: Rng::new(seed).fork(0x6e73_6761),
            population: vec![],
            offspring: vec![],
            seen: HashSet::new(),
        }
    }

    /// The next genome to evaluate, never one asked before; `None` once none new can be found
    /// (the search space is exhausted).
    pub fn ask(&mut self) -> Option<Vec<usize>> {
        let initial = self.population.is_empty();
        for attempt in 0..64 {
            let genome = if self.seen.is_empty() {
                // The exact configuration first: it anchors the front.
                vec![0; self.genes]
            } else if initial || attempt >= 48 {
                self.random_genome()
            } else {
                self.child()
            };
            if self.seen.insert(genome.clone()) {
                return Some(genome);
            }
        }
        None
    }

    /// Records what `genome` (from [`Nsga2::ask`]) scored: `objectives` to minimise and its
    /// constraint `violation` (0 when it meets the constraint).
    pub fn tell(&mut self, genome: Vec<usize>, objectives: Vec<f64>, violation: f64) {
        self.offspring.push(Individual {
            genome,
            objectives,
            violation: violation.max(0.0),
            rank: 0,
            crowding: 0.0,
        });
        if self.offspring.len() >= self.population_size {
            let mut all = std::mem::take(&mut self.population);
            all.append(&mut self.offspring);
            self.population = select(all, self.population_size);
        }
    }

    /// A random genome in which each layer keeps the baseline with probability 1/2.
    fn random_genome(&mut self) -> Vec<usize> {
        (0..self.genes)
            .map(|_| {
                if self.alleles == 1 || self.rng.uniform() < 0.5 {
                    0
                } else {
                    1 + self.rng.below(self.alleles - 1)
                }
            })
            .collect()
    }

    /// Binary tournament: the better ranked, then the less crowded.
    fn tournament(&mut self) -> usize {
        let n = self.population.len();
        let (a, b) = (self.rng.below(n), self.rng.below(n));
        let (x, y) = (&self.population[a], &self.population[b]);
        if (x.rank, -x.crowding) <= (y.rank, -y.crowding) {
            a
        } else {
            b
        }
    }

    /// A child of two tournament winners: uniform crossover, then each gene mutated with
    /// probability 1/genes (at least one gene always changes).
    fn child(&mut self) -> Vec<usize> {
        let (a, b) = (self.tournament(), self.tournament());
        let mut genome: Vec<usize> = (0..self.genes)
            .map(|i| {
                if self.rng.uniform() < 0.5 {
                    self.population[a].genome[i]
                } else {
                    self.population[b].genome[i]
                }
            })
            .collect();
        let forced = self.rng.below(self.genes.max(1));
        for (i, gene) in genome.iter_mut().enumerate() {
            if i == forced || self.rng.uniform() < 1.0 / self.genes as f64 {
                // An approximated layer goes back to exact half the time: most knobs on most
                // layers break the QoS threshold, and undoing one is how an infeasible
                // configuration's offspring become feasible again. Otherwise another allele
                // than the current one, uniformly.
                *gene = if *gene != 0 && self.rng.uniform() < 0.5 {
                    0
                } else {
                    let other = self.rng.below(self.alleles - 1);
                    if other >= *gene { other + 1 } else { other }
                };
            }
        }
        genome
    }
}

/// NSGA-II environmental selection: feasible individuals by non-dominated fronts and
/// crowding, then infeasible ones by violation; the best `size` survive, ranked.
fn select(all: Vec<Individual>, size: usize) -> Vec<Individual> {
    let (feasible, mut infeasible): (Vec<_>, Vec<_>) =
        all.into_iter().partition(|ind| ind.violation == 0.0);
    let points: Vec<Vec<f64>> = feasible.iter().map(|i| i.objectives.clone()).collect();
    let mut ranked: Vec<Individual> = vec![];
    let mut rank = 0;
    for front in fronts(&points) {
        let distances = crowding(&points, &front);
        let mut members: Vec<(usize, f64)> = front.into_iter().zip(distances).collect();
        // Most isolated first, so a truncated front keeps its spread.
        members.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (i, d) in members {
            let mut ind = feasible[i].clone();
            ind.rank = rank;
            ind.crowding = d;
            ranked.push(ind);
        }
        rank += 1;
    }
    infeasible.sort_by(|a, b| a.violation.total_cmp(&b.violation));
    for mut ind in infeasible {
        ind.rank = rank;
        ind.crowding = 0.0;
        rank += 1;
        ranked.push(ind);
    }
    ranked.truncate(size);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy problem: gene values are "approximation levels"; speed is their sum, quality
    /// drops with the square of each, and quality below a threshold is infeasible.
    fn score(genome: &[usize]) -> (Vec<f64>, f64) {
        let speed: f64 = genome.iter().map(|&g| g as f64).sum();
        let loss: f64 = genome.iter().map(|&g| (g * g) as f64).sum::<f64>() / 10.0;
        (vec![loss, -speed], (loss - 3.0).max(0.0))
    }

    fn run(seed: u64) -> Vec<Vec<usize>> {
        let mut opt = Nsga2::new(6, 5, 12, seed);
        let mut asked = vec![];
        for _ in 0..300 {
            let Some(genome) = opt.ask() else { break };
            let (objectives, violation) = score(&genome);
            asked.push(genome.clone());
            opt.tell(genome, objectives, violation);
        }
        asked
    }

    #[test]
    fn asks_new_genomes_deterministically() {
        let asked = run(1);
        assert_eq!(asked[0], vec![0; 6]);
        let unique: HashSet<_> = asked.iter().collect();
        assert_eq!(unique.len(), asked.len());
        assert_eq!(asked, run(1));
        assert_ne!(asked, run(2));
    }

    #[test]
    fn improves_on_random_search() {
        // The best feasible speed found late must beat what the random initial population had.
        let asked = run(3);
        let best = |gs: &[Vec<usize>]| {
            gs.iter()
                .map(|g| score(g))
                .filter(|(_, v)| *v == 0.0)
                .map(|(o, _)| -o[1])
                .fold(0.0, f64::max)
        };
        assert!(
            best(&asked) > best(&asked[..12]),
            "{} vs {}",
            best(&asked),
            best(&asked[..12])
        );
    }

    #[test]
    fn exhausts_a_tiny_space() {
        let mut opt = Nsga2::new(2, 2, 4, 0);
        let mut n = 0;
        while let Some(g) = opt.ask() {
            let (o, v) = score(&g);
            opt.tell(g, o, v);
            n += 1;
            assert!(n <= 4);
        }
        assert_eq!(n, 4);
    }
}
