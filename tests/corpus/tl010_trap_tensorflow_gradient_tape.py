"""A Keras model trained with a custom TensorFlow loop: GradientTape gradients summed by hand and applied every few batches."""
import tensorflow as tf


def train(model, dataset, epochs=3, accum_steps=4):
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    accumulated = [tf.zeros_like(v) for v in model.trainable_variables]
    for epoch in range(epochs):
        for step, (x, y) in enumerate(dataset):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            accumulated = [a + g for a, g in zip(accumulated, grads)]
            if (step + 1) % accum_steps == 0:
                optimizer.apply_gradients(zip(accumulated, model.trainable_variables))
                accumulated = [tf.zeros_like(v) for v in model.trainable_variables]
