import torch.nn as nn
from torch.nn import CrossEntropyLoss
from transformers import BertModel, BertPreTrainedModel


class BertSoftmaxTagger(BertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.bert = BertModel(config)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.bert(input_ids, attention_mask=attention_mask)[0])
        outputs = (logits,)
        if labels is not None:
            loss_fct = CrossEntropyLoss(ignore_index=0)
            active = attention_mask.view(-1) == 1
            loss = loss_fct(logits.view(-1, self.num_labels)[active], labels.view(-1)[active])
            outputs = (loss,) + outputs
        return outputs


class RobertaSoftmaxTagger(BertSoftmaxTagger):
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.bert(input_ids, attention_mask=attention_mask)[0])
        if labels is None:
            return (logits,)
        loss = nn.functional.cross_entropy(logits.reshape(-1, self.num_labels), labels.reshape(-1), ignore_index=0)
        return loss, logits
