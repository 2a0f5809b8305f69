"""Models and training: the builders DyNet users expect, trainers, and a training loop.

Every builder is per-instance code (one sentence, one tree); the runtime does the batching.

* :class:`LSTMBuilder` / :class:`LSTMState` - vanilla multi-layer LSTM (``initial_state``,
  ``add_input``, ``transduce``), per step and layer an input projection and one fused
  ``lstm_step`` node;
* :class:`BiLSTMBuilder` - a bidirectional, multi-layer LSTM;
* :class:`CharBiLSTMEmbedder` - character BiLSTM word vectors for rare words;
* :class:`TreeLSTMCell` - the binary Tree-LSTM of Tai et al. (2015);
* :class:`MLP` - affine layers with an activation;
* :class:`SGDTrainer` (learning-rate decay) and :class:`AdamTrainer`, with gradient clipping;
* :func:`train` - minibatch loop with a progress bar.
"""
from .char import CharBiLSTMEmbedder
from .loop import train
from .lstm import BiLSTMBuilder, LSTMBuilder, LSTMState
from .mlp import MLP
from .trainers import AdamTrainer, SGDTrainer, Trainer
from .treelstm import TreeLSTMCell

__all__ = ["LSTMBuilder", "LSTMState", "BiLSTMBuilder", "CharBiLSTMEmbedder", "TreeLSTMCell",
           "MLP", "Trainer", "SGDTrainer", "AdamTrainer", "train"]
